#!/usr/bin/env bash
# Writes the man page of mdoc-respond(1) to stdout, made from the CLI's own help (the top level and
# every command's --help), so the page says what the binary does.
#   usage: scripts/manpage.sh CLI VERSION [EPOCH]      (EPOCH: the page's date, default now)
set -euo pipefail
cli=$1
version=$2
date=$(date -u -d "@${3:-$(date +%s)}" +%Y-%m-%d)
roff() {   # help text → preformatted roff: backslashes escaped, control characters at line start guarded
    sed -e 's/\\/\\e/g' -e 's/^\([.'"'"']\)/\\\&\1/'
}
top=$("$cli" --help 2>&1)
commands=$(sed -n '/^commands:/,/^$/p' <<< "$top" | awk 'NF && !/^commands:/ { print $1 }')
cat <<ROFF
.TH MDOC-RESPOND 1 "$date" "mdoc-respond $version" "User Commands"
.SH NAME
mdoc-respond \\- answer W3C Digital Credentials API requests for mobile documents (ISO/IEC 18013-7 Annex C, OpenID4VP)
.SH SYNOPSIS
.B mdoc-respond
.I command
[\\fIoptions\\fR]
.br
.B mdoc-respond
.B \\-\\-version
.SH DESCRIPTION
mdoc-respond is the wallet side of presenting a mobile document (mDL, EU PID, age attestation) to a web
page: it answers a raw Digital Credentials API request from an origin with the credentials of a
credential context, releasing only what was requested and approved.
.PP
.nf
$(roff <<< "$top")
.fi
.SH COMMANDS
ROFF
for c in $commands; do
    echo ".SS $c"
    echo ".nf"
    "$cli" "$c" --help 2>&1 | roff
    echo ".fi"
done
# The exit codes, as the help lists them ("exit codes: 0 ok, 1 invalid or refused input, ...").
codes=$(sed -n 's/^exit codes: //p' <<< "$top")
[ -n "$codes" ] || { echo "manpage: the help lists no exit codes" >&2; exit 1; }
echo ".SH EXIT STATUS"
tr ',' '\n' <<< "$codes" | sed 's/^ *//' | while read -r code meaning; do
    printf '.TP\n.B %s\n%s\n' "$code" "$meaning"
done
cat <<ROFF
.SH FILES
.TP
.I /usr/share/mdoc-respond/test-vectors
the built-in test context, PKI and requests (test keys, published on purpose; they protect nothing);
.B mdoc-respond context init \\-\\-test-data \\-\\-context DIR
makes a private, writable copy.
.TP
.I \${XDG_DATA_HOME:-~/.local/share}/mdoc-respond/zk
the zero-knowledge prover and circuits, when installed.
.SH SEE ALSO
The project's README and docs/ (the CLI guide, docs/cli.md).
ROFF

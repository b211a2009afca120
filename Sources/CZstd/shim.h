// Debian's libzstd (libzstd-dev), for the Longfellow circuits (zstd-compressed).
#include <zstd.h>

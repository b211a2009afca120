// A PKCS#11 module for tests that wraps SoftHSM2 and injects one fault, chosen by the module's
// file name: a copy named `<anything>fault-<mode>.so` behaves as <mode> (see p11fault.c).
#ifndef MDOC_P11FAULT_H
#define MDOC_P11FAULT_H
// The fault modes this module knows, for tests that list them.
const char *mdoc_p11fault_modes(void);
#endif

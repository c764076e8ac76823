/*
 * 36-keyctl — catalogue rows 19 and 30: the kernel keyring.
 *
 * expect: ok
 *
 * Keyrings are not namespaced by our namespaces (the user keyring is per host uid, shared by
 * every sandbox) and keyctl has a long CVE history. keyctl, add_key and request_key must fail.
 * request_key is called without callout info, so no upcall is ever made on the host.
 */
#include "../hostile.h"
#include <linux/keyctl.h>

int main(void)
{
    hostile_init(15);
    PROBE("keyctl(GET_KEYRING_ID, session, create)",
          syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1));
    PROBE("keyctl(GET_KEYRING_ID, user)",
          syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0));
    PROBE("keyctl(JOIN_SESSION_KEYRING)", syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL));
    PROBE("add_key(user, process keyring)",
          syscall(SYS_add_key, "user", "crucible-sec", "x", 1, KEY_SPEC_PROCESS_KEYRING));
    PROBE("request_key(user, no callout)",
          syscall(SYS_request_key, "user", "crucible-sec-none", NULL, KEY_SPEC_PROCESS_KEYRING));
    return hostile_finish();
}

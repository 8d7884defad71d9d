// SPDX-License-Identifier: BSD-3-Clause
/*
 * How a put travels, as pure functions of sizes and capabilities, so the
 * choice can be unit-tested without a fabric.
 */
#ifndef SHM_CONDUIT_OFI_PLAN_H
#define SHM_CONDUIT_OFI_PLAN_H

#include <stddef.h>

typedef enum {
    CDT_PATH_INJECT,   /* fi_inject_write: source reusable at once, no buffer */
    CDT_PATH_BOUNCE,   /* copy to a registered bounce slot, fi_write, return */
    CDT_PATH_FRAGMENT, /* fi_write fragments straight from the source */
} cdt_put_path_t;

static inline cdt_put_path_t cdt_plan_put(size_t bytes, size_t inject, size_t bounce,
                                          unsigned nbounce)
{
    if (bytes <= inject)
        return CDT_PATH_INJECT;
    if (bytes <= bounce && nbounce > 0)
        return CDT_PATH_BOUNCE;
    return CDT_PATH_FRAGMENT;
}

/* Number of fi_write/fi_read calls for a transfer of bytes (frag >= 1). */
static inline size_t cdt_plan_nfrags(size_t bytes, size_t frag)
{
    return bytes / frag + (bytes % frag != 0);
}

/*
 * Largest put sent as an inject: the provider's limit, lowered by the user's,
 * and none at all where an inject would not be delivery-complete although
 * quiet needs it to be (tcp;ofi_rxm).
 */
static inline size_t cdt_plan_inject_size(size_t provider, size_t user, int put_needs_dc,
                                          int inject_honours_dc)
{
    if (put_needs_dc && !inject_honours_dc)
        return 0;
    return (user && user < provider) ? user : provider;
}

/* Fragment size: the user's, capped by the provider's max message size. */
static inline size_t cdt_plan_frag_size(size_t user, size_t max_msg)
{
    size_t f = user ? user : ((size_t)1 << 20);
    return (max_msg && f > max_msg) ? max_msg : f;
}

#endif /* SHM_CONDUIT_OFI_PLAN_H */

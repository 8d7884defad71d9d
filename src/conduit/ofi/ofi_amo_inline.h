// SPDX-License-Identifier: BSD-3-Clause
/* Fast paths of atomics over libfabric. */
#ifndef SHM_CONDUIT_OFI_AMO_INLINE_H
#define SHM_CONDUIT_OFI_AMO_INLINE_H

#endif /* SHM_CONDUIT_OFI_AMO_INLINE_H */

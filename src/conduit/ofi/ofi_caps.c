// SPDX-License-Identifier: BSD-3-Clause
/*
 * Provider quirks as data. Each row is backed by a measurement in
 * shared/PROVIDERS.md; anything not listed gets the cautious default.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conduit/ofi/ofi.h"
#include "conduit/ofi/ofi_regions.h"

static const cdt_ofi_prov_row_t prov_table[] = {
    /* shm: RMA is a kernel copy (process_vm_writev) done by the origin when
     * FI_MR_VIRT_ADDR is granted, so a counted put has landed; otherwise data
     * goes through the target's queue. */
    {.name = "shm", .put_needs_dc = -1, .inject_honours_dc = 0, .cntr_wait_broken = 1,
     .needs_target_progress = 1, .kick_progress = 1,
     /* A delivery-complete non-fetching atomic to oneself while peers send
      * theirs to the same PE crashes or hangs shm 1.17 (tests/pe_amo
      * amo_contention); the fetching path is sound, and faster. */
     .amo_post_via_fetch = 1,
     /* Region files are named <pid>:<ep>:<dom>; see cdt_ofi_sweep_own_regions. */
     .pid_named_regions = 1,
     /* A read of 4 iovs goes through the target's queue, not the kernel
      * copy: 1 MiB pulled as 16 x 64 KiB pieces ran at 0.07x of one 1 MiB
      * read (bench/rpc/sg_bw), 0.6x as 16 one-iov reads. */
     .rma_iov_slow = 1,
     /* A message above its inject size is one process_vm_readv by the
      * receiver from the sender's buffer, of any size. A plain pack into
      * that buffer afterwards took 8-15 us for 32 KiB whenever the two
      * PEs' cores were far apart (repeated at once: 1.5 us), streamed 3 us:
      * bench/results/strided-xf-2026-11-29. */
     .msg_peer_copies = 1, .msg_eager_max = 65536},
    /* rxm counts a put complete before the data landed; injects ignore DC. */
    /* rxm opens a connection on a pair's first transfer. When both ends of a
     * pair do so at once, rxm keeps the request of the end with the lower
     * address and rejects the other ("Connection refused" at FI_LOG_LEVEL=
     * info: expected); the rejected side's operation is retried on the
     * surviving connection. Once blamed for a 4-PE barrier hang, for which
     * every pair was wired up at init; that hang did not come back with
     * connections on demand (pe.connect_demand: all-to-all first contacts
     * at 8 PEs; pe_barrier_sync 4 PEs, SHMEM_YIELD=off). SHMEM_OFI_EAGER_
     * CONNECT=1 still wires every pair up at init (cdt_wireup). */
    /* read_orders_writes: one connection per endpoint pair, a byte stream
     * the target handles in order, so a read's answer leaves after the
     * writes before it were applied. bench/raw_fi order (32 injected 8-byte
     * puts, completion, then a check at the target): 537/2000 rounds had a
     * put not yet landed when its counter said done; with an 8-byte read
     * after the puts, 0/1000 (also 0/1000 with FI_FENCE on the read). */
    /* msg_eager_max: FI_OFI_RXM_BUFFER_SIZE's default 16 KiB, less rxm's
     * header; larger messages go segmented (SAR): measured no faster
     * (osu_strided iput 32 KiB: 50 vs 51 us). */
    {.name = "tcp;ofi_rxm", .put_needs_dc = 1, .inject_honours_dc = 0, .read_orders_writes = 1,
     .cntr_wait_broken = 0, .needs_target_progress = 1, .lazy_connect = 1,
     .msg_eager_max = CDT_OFI_RXM_EAGER_MSG},
    {.name = "verbs;ofi_rxm", .put_needs_dc = 1, .inject_honours_dc = 0, .cntr_wait_broken = 0,
     .needs_target_progress = 1, .lazy_connect = 1, .msg_eager_max = CDT_OFI_RXM_EAGER_MSG},
    /* sockets: fi_cntr_wait returns +110. With the manual progress we ask
     * for it has no progress thread of its own: the target must drive it,
     * and it refuses FI_GETWAIT on a CQ (ofi_init.c cdt_ctx_init). Its writes,
     * injected ones too, are counted when the target's write-complete answer
     * comes back (strace: 2 messages per fi_inject_write, the same as a
     * delivery-complete fi_write), so injects need no read-back:
     * bench/raw_fi order, 0/1000 rounds late without it (tcp;ofi_rxm: 537/
     * 2000), and tests/pe quiet_small_oob.sockets. A read-back would double
     * the messages of put+quiet (4 per put instead of 2). */
    /* msg_eager_max: a message of any size goes as one write on the
     * connection (osu_strided iput of 32 KiB: one 32 KiB message 59-100 us
     * against three of 16 KiB 78-111 us, contiguous put 27-48 us). */
    {.name = "sockets", .put_needs_dc = 1, .inject_honours_dc = 1, .read_orders_writes = 1,
     .cntr_wait_broken = 1, .needs_target_progress = 1, .sends_in_progress = 1,
     .msg_eager_max = 65536},
    /* psm3: "an endpoint can only communicate with endpoints with the same
     * UUID"; jobs sharing the default UUID can collide (fi_psm3.7). */
    {.name = "psm3", .put_needs_dc = 1, .inject_honours_dc = 0, .cntr_wait_broken = 1,
     .needs_target_progress = 1, .auth_job_uuid = 1},
};

static const cdt_ofi_prov_row_t prov_default = {
    .name = "(other)", .put_needs_dc = 1, .inject_honours_dc = 0, .cntr_wait_broken = 1,
    .needs_target_progress = 1,
};

/*
 * The software providers, by core name; every other provider is taken for
 * a NIC's and preferred to these (ofi_select.c). udp (with ofi_rxd) and net
 * misbehaved here (shared/PROVIDERS.md: atomics that never complete or
 * return -FI_ENOSYS): only when named.
 */
static const cdt_ofi_class_row_t class_table[] = {
    {"shm", CDT_OFI_CLASS_HOST, "same host only"},
    {"tcp", CDT_OFI_CLASS_TCP, "TCP sockets"},
    {"sockets", CDT_OFI_CLASS_SOCKETS, "TCP sockets (older provider)"},
    {"udp", CDT_OFI_CLASS_AVOID, "unreliable here (atomics hang); only when named"},
    {"net", CDT_OFI_CLASS_AVOID, "atomics fail here (-FI_ENOSYS); only when named"},
};
static const cdt_ofi_class_row_t class_hw = {"", CDT_OFI_CLASS_HW, "hardware (NIC) provider"};

const cdt_ofi_class_row_t *cdt_ofi_prov_class(const char *prov_name)
{
    size_t n = strcspn(prov_name, ";");
    for (size_t i = 0; i < sizeof(class_table) / sizeof(class_table[0]); i++)
        if (strlen(class_table[i].core) == n && strncmp(class_table[i].core, prov_name, n) == 0)
            return &class_table[i];
    return &class_hw;
}

const cdt_ofi_prov_row_t *cdt_ofi_prov_row(const char *prov_name)
{
    for (size_t i = 0; i < sizeof(prov_table) / sizeof(prov_table[0]); i++)
        if (strcmp(prov_table[i].name, prov_name) == 0)
            return &prov_table[i];
    return &prov_default;
}

/* At exit(): a process that ends without closing its endpoints (a client
 * that exits on an error, a PE that returns from main without finalize)
 * would leave its region files behind; only its own pid's are removed. */
static void sweep_own_regions_at_exit(void)
{
    cdt_ofi_regions_unlink(getpid());
}

void cdt_ofi_sweep_own_regions(const char *prov_name)
{
    static int swept;
    if (swept || !cdt_ofi_prov_row(prov_name)->pid_named_regions)
        return;
    swept = 1;
    cdt_ofi_regions_unlink(getpid());
    atexit(sweep_own_regions_at_exit);
}

// SPDX-License-Identifier: BSD-3-Clause
/*
 * The contracts fabcheck presents: one row per provider, from the current
 * libfabric man pages (/work/shared/peers/libfabric-man) and, where a page
 * is silent, the provider's source in ofiwg/libfabric. Each value says
 * where it comes from; tests/fabric/README.md has the table.
 *
 * Datatype bit masks (bit = enum fi_datatype): 0x00ff the eight integer
 * types, 0x03ff + float and double, 0x07ff + float complex, 0x0fff +
 * double complex, 0x3fff all fourteen.
 */
#include <string.h>

#include "fc.h"

#define INTS 0x00ffu
#define REAL 0x03ffu
#define ALL 0x3fffu
#define I64 ((1u << FI_INT64) | (1u << FI_UINT64))

#define RMA_CAPS (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define MSG_CAPS (FI_MSG | FI_SEND | FI_RECV | FI_MULTI_RECV | FI_SOURCE | FI_DIRECTED_RECV)
#define COMM_CAPS (FI_LOCAL_COMM | FI_REMOTE_COMM)

/*
 * libfabric's software atomics (prov/util ofi_atomic_valid): ofi_rxm
 * (verbs;ofi_rxm) and efa (emulated atomics) answer from it. Measured with
 * fi_query_atomic on libfabric 1.17's tcp;ofi_rxm, which runs the same code.
 */
#define UTIL_AMO_TABLE                                                         \
    .dt = {                                                                    \
        [FC_AMO_PLAIN] = {[FI_MIN] = REAL, [FI_MAX] = REAL, [FI_SUM] = 0x7ff,  \
                          [FI_PROD] = 0x7ff, [FI_LOR] = 0x7ff, [FI_LAND] = 0x7ff, \
                          [FI_BOR] = INTS, [FI_BAND] = INTS, [FI_LXOR] = 0x7ff,   \
                          [FI_BXOR] = INTS, [FI_ATOMIC_WRITE] = 0x7ff},        \
        [FC_AMO_FETCH] = {[FI_MIN] = REAL, [FI_MAX] = REAL, [FI_SUM] = 0x7ff,  \
                          [FI_PROD] = 0x7ff, [FI_LOR] = 0x7ff, [FI_LAND] = 0x7ff, \
                          [FI_BOR] = INTS, [FI_BAND] = INTS, [FI_LXOR] = 0x7ff,   \
                          [FI_BXOR] = INTS, [FI_ATOMIC_READ] = 0x7ff,          \
                          [FI_ATOMIC_WRITE] = 0x7ff},                          \
        [FC_AMO_COMPARE] = {[FI_CSWAP] = 0x7ff, [FI_CSWAP_NE] = 0x7ff,         \
                            [FI_CSWAP_LE] = REAL, [FI_CSWAP_LT] = REAL,        \
                            [FI_CSWAP_GE] = REAL, [FI_CSWAP_GT] = REAL,        \
                            [FI_MSWAP] = INTS},                                \
    }

/* rxm: one eager buffer (FI_OFI_RXM_BUFFER_SIZE, 16 KiB) less its header:
 * fi_query_atomic reports 2036 8-byte elements. */
static const fc_amo_table_t amo_rxm = {UTIL_AMO_TABLE, .max_bytes = 2036 * 8};
/* efa: max_atomic_size = device MTU (~8 KiB) less headers
 * (efa_prov_info_alloc_for_rdm); approximated. */
static const fc_amo_table_t amo_efa = {UTIL_AMO_TABLE, .max_bytes = 8000};
/* psm3: psmx3_atomic.c implements the same op x type matrix; its
 * max_atomic_size is INT_MAX (psmx3_domain_init). */
static const fc_amo_table_t amo_psm3 = {UTIL_AMO_TABLE, .max_bytes = 0x7fffffff};

/* cxi: _cxip_amo_valid in prov/cxi/src/cxip_atomic.c; "Cassini implements
 * single element atomics" (count 1). */
static const fc_amo_table_t amo_cxi = {
    .dt = {
        [FC_AMO_PLAIN] = {[FI_MIN] = REAL, [FI_MAX] = REAL, [FI_SUM] = 0x0fff,
                          [FI_LOR] = INTS, [FI_LAND] = INTS, [FI_LXOR] = INTS,
                          [FI_BOR] = INTS, [FI_BAND] = INTS, [FI_BXOR] = INTS,
                          [FI_ATOMIC_WRITE] = 0x0fff},
        [FC_AMO_FETCH] = {[FI_MIN] = REAL, [FI_MAX] = REAL, [FI_SUM] = 0x0fff,
                          [FI_LOR] = INTS, [FI_LAND] = INTS, [FI_LXOR] = INTS,
                          [FI_BOR] = INTS, [FI_BAND] = INTS, [FI_BXOR] = INTS,
                          [FI_ATOMIC_WRITE] = 0x0fff, [FI_ATOMIC_READ] = 0x0fff},
        [FC_AMO_COMPARE] = {[FI_CSWAP] = 0x0fff, [FI_CSWAP_NE] = 0x0fff,
                            [FI_CSWAP_LE] = REAL, [FI_CSWAP_LT] = REAL,
                            [FI_CSWAP_GE] = REAL, [FI_CSWAP_GT] = REAL,
                            [FI_MSWAP] = INTS},
    },
    .max_bytes = 0,
};

/* opx: fi_opx_atomic_writevalid accepts every op up to FI_ATOMIC_WRITE on
 * every datatype (prov/opx/src/fi_opx_atomic.c), the compare forms
 * FI_CSWAP..FI_MSWAP; counts up to UINT64_MAX. */
static const fc_amo_table_t amo_opx = {
    .dt = {
        [FC_AMO_PLAIN] = {[FI_MIN] = ALL, [FI_MAX] = ALL, [FI_SUM] = ALL, [FI_PROD] = ALL,
                          [FI_LOR] = ALL, [FI_LAND] = ALL, [FI_BOR] = ALL, [FI_BAND] = ALL,
                          [FI_LXOR] = ALL, [FI_BXOR] = ALL, [FI_ATOMIC_WRITE] = ALL},
        [FC_AMO_FETCH] = {[FI_MIN] = ALL, [FI_MAX] = ALL, [FI_SUM] = ALL, [FI_PROD] = ALL,
                          [FI_LOR] = ALL, [FI_LAND] = ALL, [FI_BOR] = ALL, [FI_BAND] = ALL,
                          [FI_LXOR] = ALL, [FI_BXOR] = ALL, [FI_ATOMIC_READ] = ALL,
                          [FI_ATOMIC_WRITE] = ALL},
        [FC_AMO_COMPARE] = {[FI_CSWAP] = ALL, [FI_CSWAP_NE] = ALL, [FI_CSWAP_LE] = ALL,
                            [FI_CSWAP_LT] = ALL, [FI_CSWAP_GE] = ALL, [FI_CSWAP_GT] = ALL,
                            [FI_MSWAP] = ALL},
    },
    .max_bytes = (size_t)1 << 40,
};

/* strict: deliberately small, so that the emulated path is exercised. */
static const fc_amo_table_t amo_strict = {
    .dt = {
        [FC_AMO_PLAIN] = {[FI_SUM] = I64, [FI_ATOMIC_WRITE] = I64},
        [FC_AMO_FETCH] = {[FI_SUM] = I64, [FI_ATOMIC_READ] = I64, [FI_ATOMIC_WRITE] = I64},
        [FC_AMO_COMPARE] = {[FI_CSWAP] = I64},
    },
    .max_bytes = 0,
};

static const fc_profile_t profiles[] = {
    {
        /* fi_verbs.7 + fi_rxm.7: RDM endpoints are verbs;ofi_rxm. */
        .key = "verbs",
        .prov_name = "verbs;ofi_rxm",
        /* fi_rxm.7 "supports FI_MSG, FI_TAGGED, FI_RMA and FI_ATOMIC" */
        .caps = RMA_CAPS | MSG_CAPS | FI_TAGGED | FI_ATOMIC | COMM_CAPS,
        .mode = 0, /* rxm asks no mode of the app (rxm_info_to_rxm) */
        /* fi_rxm.7 "FI_MR_VIRT_ADDR, FI_MR_ALLOCATED, FI_MR_PROV_KEY MR mode
         * bits would be required from the app in case the core provider
         * requires it"; fi_verbs.7 "Only FI_MR_BASIC mode is supported". */
        .mr_required = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY,
        /* fi_verbs.7 requires FI_MR_LOCAL; rxm hides it unless the app
         * admits it (rxm_alter_info clears it otherwise). */
        .mr_optional = FI_MR_LOCAL,
        .mr_key_size = 4,  /* verbs_info.c: sizeof ibv_sge.lkey */
        .mr_iov_limit = 1, /* fi_verbs.7 "s/g list size of 1" */
        .inject_size = 16384, /* fi_rxm.7 FI_OFI_RXM_BUFFER_SIZE "~16k" */
        .max_msg_size = (size_t)1 << 30, /* ibv port max_msg_sz (mlx5: 1 GiB) */
        .tx_size = 1024, .rx_size = 1024, /* fi_rxm.7 FI_OFI_RXM_TX/RX_SIZE */
        .tx_iov_limit = 4, .rx_iov_limit = 4, /* fi_verbs.7 FI_VERBS_TX/RX_IOV_LIMIT */
        .rma_iov_limit = 1, /* verbs_info.c .rma_iov_limit = 1 */
        .msg_order = FI_ORDER_SAS, /* fi_rxm.7: RAR..SAW dropped with FI_ATOMIC */
        .progress_manual = 1, .progress_auto = 1, /* fi_rxm.7 "supports both" */
        .progress_default = FI_PROGRESS_MANUAL,
        .av_table = 1, .av_map = 1, .av_default = FI_AV_UNSPEC,
        .auth = FC_AUTH_NONE, /* fi_rxm.7 "Authorization keys" unsupported */
        .amo = &amo_rxm,
    },
    {
        /* fi_efa.7, the efa fabric of RDM endpoints */
        .key = "efa",
        .prov_name = "efa",
        /* fi_efa.7 "FI_MSG, FI_TAGGED, FI_SEND, FI_RECV, FI_RMA, FI_WRITE,
         * FI_READ, FI_ATOMIC, FI_DIRECTED_RECV, FI_MULTI_RECV, and FI_SOURCE" */
        .caps = RMA_CAPS | MSG_CAPS | FI_TAGGED | FI_ATOMIC | COMM_CAPS,
        /* fi_efa.7 "The efa fabric of RDM endpoint doesn't have these
         * requirements" (FI_CONTEXT2 is efa-direct's and DGRAM's) */
        .mode = 0,
        /* efa_prov_info.c: the device's OFI_MR_BASIC_MAP | FI_MR_LOCAL with
         * FI_MR_LOCAL cleared for RDM; fi_efa.7 "Applications may specify
         * FI_MR_LOCAL in the MR mode flags in order to use descriptors" */
        .mr_required = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY,
        .mr_optional = FI_MR_LOCAL,
        .mr_key_size = 4, /* efa_prov_info.c: sizeof ibv_sge.lkey */
        .mr_iov_limit = 1, /* EFA_MR_IOV_LIMIT */
        .inject_size = 4096, /* min(MTU - header, SHM_MAX_INJECT_SIZE 4096) */
        .max_msg_size = SIZE_MAX, /* fi_efa.7 "does not have a maximum message size" */
        .tx_size = 4096, .rx_size = 4096, /* device queue depth; device-dependent */
        .tx_iov_limit = 4, .rx_iov_limit = 4, /* EFA_RDM_IOV_LIMIT */
        .rma_iov_limit = 1,
        .msg_order = FI_ORDER_SAS | FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW |
                     FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW,
        /* fi_efa.7 "The FI_EP_RDM endpoint in the efa fabric supports
         * FI_PROGRESS_MANUAL" */
        .progress_manual = 1, .progress_auto = 0, .progress_default = FI_PROGRESS_MANUAL,
        /* fi_efa.7 "The provider supports FI_AV_TABLE"; FI_AV_MAP accepted
         * in 1.x; the table when the app has no preference */
        .av_table = 1, .av_map = 1, .av_default = FI_AV_TABLE,
        .auth = FC_AUTH_NONE,
        .amo = &amo_efa,
    },
    {
        /* fi_cxi.7 (Slingshot) */
        .key = "cxi",
        .prov_name = "cxi",
        .caps = RMA_CAPS | MSG_CAPS | FI_TAGGED | FI_ATOMIC | FI_NAMED_RX_CTX | FI_RMA_EVENT |
                FI_FENCE | COMM_CAPS,
        .mode = 0, /* fi_cxi.7 "does not require any operation modes" */
        /* fi_cxi.7 "The provider requires FI_MR_ENDPOINT. FI_MR_ALLOCATED is
         * required if ODP in not enabled ... Client specified 32-bit MR keys
         * are the default unless FI_MR_PROV_KEY is specified" */
        .mr_required = FI_MR_ENDPOINT | FI_MR_ALLOCATED,
        .mr_optional = FI_MR_PROV_KEY,
        .mr_key_size = 4, .mr_key_size_prov = 8, /* CXIP_MR_KEY_SIZE, _PROV_KEY_SIZE */
        .mr_iov_limit = 1, /* cxip_info.c */
        .inject_size = 192, /* CXIP_INJECT_SIZE = C_MAX_IDC_PAYLOAD_UNR */
        .max_msg_size = ((size_t)1 << 32) - 1, /* CXIP_EP_MAX_MSG_SZ */
        .tx_size = 16384, .rx_size = 15360, /* CXIP_MAX_TX_SIZE, CXIP_MAX_RX_SIZE */
        .tx_iov_limit = 1, .rx_iov_limit = 1, .rma_iov_limit = 1, /* cxip_info.c */
        /* fi_cxi.7 "Supported message ordering" */
        .msg_order = FI_ORDER_SAS | FI_ORDER_WAW | FI_ORDER_RMA_WAW | FI_ORDER_RMA_RAR |
                     FI_ORDER_ATOMIC_WAW | FI_ORDER_ATOMIC_RAR,
        /* fi_cxi.7 "currently supports FI_PROGRESS_MANUAL" */
        .progress_manual = 1, .progress_auto = 0, .progress_default = FI_PROGRESS_MANUAL,
        /* fi_cxi.7 "supports both FI_AV_TABLE and FI_AV_MAP" */
        .av_table = 1, .av_map = 1, .av_default = FI_AV_UNSPEC,
        /* fi_cxi.7 "Two endpoints must use the same VNI in order to
         * communicate"; struct cxi_auth_key { uint32_t svc_id; uint16_t vni; } */
        .auth = FC_AUTH_CXI_VNI, .auth_key_size = 8,
        .amo = &amo_cxi,
    },
    {
        /* fi_psm3.7 */
        .key = "psm3",
        .prov_name = "psm3",
        .caps = RMA_CAPS | MSG_CAPS | FI_TAGGED | FI_ATOMIC | FI_RMA_EVENT | COMM_CAPS,
        /* fi_psm3.7 "FI_CONTEXT is required for the FI_TAGGED and FI_MSG
         * capabilities ... If none of FI_TAGGED and FI_MSG is asked for, the
         * FI_CONTEXT mode is not required." */
        .mode = FI_CONTEXT, .mode_msg_only = 1,
        /* psmx3_attr.c mr_mode FI_MR_SCALABLE: offsets and requested keys
         * (psmx3_domain_open keeps FI_MR_BASIC only when asked for it) */
        .mr_required = 0, .mr_optional = 0,
        .mr_key_size = 8, .mr_iov_limit = 65535, /* psmx3_attr.c */
        .inject_size = 64, /* fi_psm3.7 FI_PSM3_INJECT_SIZE "default setting is 64" */
        .max_msg_size = 0xfffff000ul, /* PSMX3_MAX_MSG_SIZE & ~0x0FFF */
        .tx_size = SIZE_MAX, .rx_size = SIZE_MAX, /* psmx3_attr.c UINT64_MAX */
        .tx_iov_limit = 13, .rx_iov_limit = 1, /* PSMX3_IOV_MAX_COUNT; rx 1 */
        .rma_iov_limit = 1,
        .msg_order = FI_ORDER_SAS,
        /* fi_psm3.7 "performs optimal with manual progress ... does support
         * auto progress mode" */
        .progress_manual = 1, .progress_auto = 1, .progress_default = FI_PROGRESS_MANUAL,
        .av_table = 1, .av_map = 1, .av_default = FI_AV_UNSPEC,
        /* fi_psm3.7 FI_PSM3_UUID: "an endpoint can only communicate with
         * endpoints with the same UUID"; ep_attr->auth_key (16 bytes) */
        .auth = FC_AUTH_PSM3_UUID, .auth_key_size = 16,
        .amo = &amo_psm3,
    },
    {
        /* fi_opx.7 (Omni-Path Express) */
        .key = "opx",
        .prov_name = "opx",
        .caps = RMA_CAPS | MSG_CAPS | FI_TAGGED | FI_ATOMIC | COMM_CAPS,
        /* fi_opx.7 "Two modes are defined: FI_CONTEXT2 and FI_ASYNC_IOV. The
         * OPX provider requires FI_CONTEXT2."; fi_opx_internal.h
         * FI_OPX_DEFAULT_MODE (FI_CONTEXT2 | FI_ASYNC_IOV) */
        .mode = FI_CONTEXT2 | FI_ASYNC_IOV,
        /* fi_opx.7 "Only FI_MR_SCALABLE is supported": offsets, app keys */
        .mr_required = 0, .mr_optional = 0,
        .mr_key_size = 2, .mr_iov_limit = 1, /* fi_opx_init.c */
        .inject_size = 16, /* FI_OPX_HFI1_PACKET_IMM */
        .max_msg_size = SIZE_MAX, /* FI_OPX_MAX_MSG_SIZE ((uint64_t)-1) */
        .tx_size = SIZE_MAX, .rx_size = SIZE_MAX,
        .tx_iov_limit = SIZE_MAX, .rx_iov_limit = SIZE_MAX,
        .rma_iov_limit = 1, /* fi_opx_init.c says 0; 1 is what its msg calls take */
        .msg_order = FI_ORDER_SAS,
        /* fi_opx.7 "FI_PROGRESS_MANUAL and FI_PROGRESS_AUTO are supported" */
        .progress_manual = 1, .progress_auto = 1, .progress_default = FI_PROGRESS_MANUAL,
        /* fi_opx.7 "FI_AV_MAP and FI_AV_TABLE are both supported. FI_AV_MAP
         * is default." */
        .av_table = 1, .av_map = 1, .av_default = FI_AV_MAP,
        .auth = FC_AUTH_NONE,
        .amo = &amo_opx,
    },
    {
        /* The union of the hardest rules of the others, and smaller limits. */
        .key = "strict",
        .prov_name = "fabcheck_strict",
        .caps = RMA_CAPS | MSG_CAPS | FI_TAGGED | FI_ATOMIC | COMM_CAPS,
        .mode = FI_CONTEXT2 | FI_ASYNC_IOV,
        .mr_required = FI_MR_LOCAL | FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
                       FI_MR_RAW,
        .mr_optional = 0,
        .mr_key_size = 24, /* raw: larger than 64 bits */
        .mr_iov_limit = 1,
        .inject_size = 0,
        .max_msg_size = 65536,
        .tx_size = 64, .rx_size = 64,
        .tx_iov_limit = 1, .rx_iov_limit = 1, .rma_iov_limit = 1,
        .msg_order = FI_ORDER_SAS,
        .progress_manual = 1, .progress_auto = 0, .progress_default = FI_PROGRESS_MANUAL,
        .av_table = 0, .av_map = 1, .av_default = FI_AV_MAP,
        .auth = FC_AUTH_STRICT, .auth_key_size = 16,
        .amo = &amo_strict,
        .ctx_all_ops = 1,
        .local_needs_enable = 1,
    },
};

const fc_profile_t *fc_profile_find(const char *key)
{
    for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
        if (strcmp(profiles[i].key, key) == 0 || strcmp(profiles[i].prov_name, key) == 0)
            return &profiles[i];
    return NULL;
}

const char *fc_profile_names(void)
{
    return "verbs, efa, cxi, psm3, opx, strict";
}

size_t fc_datatype_size(enum fi_datatype dt)
{
    switch (dt) {
    case FI_INT8: case FI_UINT8: return 1;
    case FI_INT16: case FI_UINT16: return 2;
    case FI_INT32: case FI_UINT32: case FI_FLOAT: return 4;
    case FI_INT64: case FI_UINT64: case FI_DOUBLE: case FI_FLOAT_COMPLEX: return 8;
    case FI_DOUBLE_COMPLEX: return 16;
    case FI_LONG_DOUBLE: return sizeof(long double);
    case FI_LONG_DOUBLE_COMPLEX: return 2 * sizeof(long double);
    default: return 0;
    }
}

// SPDX-License-Identifier: BSD-3-Clause
//
// Symmetric-heap allocator.
//
// Policy: address-ordered first-fit. It keeps fragmentation low (long-lived blocks collect at the
// bottom of the heap, leaving one large free tail), and the choice of block depends only on
// offsets and sizes, so PEs replaying the same calls always agree.
//
// Metadata: one node per block (live or free), all outside the heap. Nodes sit in
//   - a doubly linked list in address order: O(1) neighbours for coalescing and in-place resize;
//   - an AVL tree keyed by offset, each node caching the largest free length in its subtree:
//     O(log n) lookup by offset and O(log n) "lowest-addressed free block with len >= need".
// Nodes are created before anything is modified, so a failed malloc leaves the state unchanged.

#include "alloc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct shm_alloc_node {
    struct shm_alloc_node *left, *right; /* AVL tree ordered by off */
    struct shm_alloc_node *prev, *next;  /* address-ordered list */
    size_t off, len;
    size_t max_free; /* largest free len in this subtree, 0 if none */
    int height;
    bool is_free;
} shm_alloc_node_t;

struct shm_alloc {
    size_t size, min_align;
    shm_alloc_node_t *root, *head;
    size_t used, nlive, nfree;
};

/* ---- AVL tree, augmented with max_free ---- */

static int shm_alloc_height(const shm_alloc_node_t *n) { return n ? n->height : 0; }

static size_t shm_alloc_maxf(const shm_alloc_node_t *n) { return n ? n->max_free : 0; }

static void shm_alloc_fix(shm_alloc_node_t *n)
{
    int hl = shm_alloc_height(n->left), hr = shm_alloc_height(n->right);
    size_t m = n->is_free ? n->len : 0;

    n->height = 1 + (hl > hr ? hl : hr);
    if (shm_alloc_maxf(n->left) > m)
        m = shm_alloc_maxf(n->left);
    if (shm_alloc_maxf(n->right) > m)
        m = shm_alloc_maxf(n->right);
    n->max_free = m;
}

static shm_alloc_node_t *shm_alloc_rot_right(shm_alloc_node_t *n)
{
    shm_alloc_node_t *l = n->left;

    n->left = l->right;
    l->right = n;
    shm_alloc_fix(n);
    shm_alloc_fix(l);
    return l;
}

static shm_alloc_node_t *shm_alloc_rot_left(shm_alloc_node_t *n)
{
    shm_alloc_node_t *r = n->right;

    n->right = r->left;
    r->left = n;
    shm_alloc_fix(n);
    shm_alloc_fix(r);
    return r;
}

static shm_alloc_node_t *shm_alloc_balance(shm_alloc_node_t *n)
{
    int bf;

    shm_alloc_fix(n);
    bf = shm_alloc_height(n->left) - shm_alloc_height(n->right);
    if (bf > 1) {
        if (shm_alloc_height(n->left->left) < shm_alloc_height(n->left->right))
            n->left = shm_alloc_rot_left(n->left);
        return shm_alloc_rot_right(n);
    }
    if (bf < -1) {
        if (shm_alloc_height(n->right->right) < shm_alloc_height(n->right->left))
            n->right = shm_alloc_rot_right(n->right);
        return shm_alloc_rot_left(n);
    }
    return n;
}

static shm_alloc_node_t *shm_alloc_tree_insert(shm_alloc_node_t *t, shm_alloc_node_t *n)
{
    if (!t) {
        n->left = n->right = NULL;
        shm_alloc_fix(n);
        return n;
    }
    if (n->off < t->off)
        t->left = shm_alloc_tree_insert(t->left, n);
    else
        t->right = shm_alloc_tree_insert(t->right, n);
    return shm_alloc_balance(t);
}

static shm_alloc_node_t *shm_alloc_tree_pop_min(shm_alloc_node_t *t, shm_alloc_node_t **min_p)
{
    if (!t->left) {
        *min_p = t;
        return t->right;
    }
    t->left = shm_alloc_tree_pop_min(t->left, min_p);
    return shm_alloc_balance(t);
}

/* Unlinks the node keyed off from the tree (the node itself is not freed). */
static shm_alloc_node_t *shm_alloc_tree_remove(shm_alloc_node_t *t, size_t off)
{
    if (off < t->off) {
        t->left = shm_alloc_tree_remove(t->left, off);
    } else if (off > t->off) {
        t->right = shm_alloc_tree_remove(t->right, off);
    } else {
        shm_alloc_node_t *m, *r;

        if (!t->right)
            return t->left;
        /* Relink the successor node rather than copying fields: nodes are also list members. */
        r = shm_alloc_tree_pop_min(t->right, &m);
        m->left = t->left;
        m->right = r;
        return shm_alloc_balance(m);
    }
    return shm_alloc_balance(t);
}

/* Recompute max_free on the path to the node keyed off, after its len/is_free changed. */
static void shm_alloc_tree_touch(shm_alloc_node_t *t, size_t off)
{
    if (off < t->off)
        shm_alloc_tree_touch(t->left, off);
    else if (off > t->off)
        shm_alloc_tree_touch(t->right, off);
    shm_alloc_fix(t);
}

static shm_alloc_node_t *shm_alloc_tree_find(shm_alloc_node_t *t, size_t off)
{
    while (t && t->off != off)
        t = off < t->off ? t->left : t->right;
    return t;
}

/* Lowest-addressed free node with off >= lo and len >= need. Only subtrees straddling lo are
   searched partially; a subtree wholly >= lo with max_free >= need is guaranteed a hit, so this is
   O(height). */
static shm_alloc_node_t *shm_alloc_tree_first_fit(shm_alloc_node_t *t, size_t lo, size_t need)
{
    shm_alloc_node_t *r;

    if (!t || t->max_free < need)
        return NULL;
    if (t->off >= lo) {
        r = shm_alloc_tree_first_fit(t->left, lo, need);
        if (r)
            return r;
        if (t->is_free && t->len >= need)
            return t;
    }
    return shm_alloc_tree_first_fit(t->right, lo, need);
}

/* ---- address list ---- */

static void shm_alloc_list_insert_after(shm_alloc_node_t *pos, shm_alloc_node_t *n)
{
    n->prev = pos;
    n->next = pos->next;
    if (pos->next)
        pos->next->prev = n;
    pos->next = n;
}

static void shm_alloc_list_unlink(shm_alloc_t *a, shm_alloc_node_t *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        a->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
}

/* Adds a node to both structures, right after pos in address order. */
static void shm_alloc_node_link(shm_alloc_t *a, shm_alloc_node_t *pos, shm_alloc_node_t *n)
{
    shm_alloc_list_insert_after(pos, n);
    a->root = shm_alloc_tree_insert(a->root, n);
}

static void shm_alloc_node_drop(shm_alloc_t *a, shm_alloc_node_t *n)
{
    shm_alloc_list_unlink(a, n);
    a->root = shm_alloc_tree_remove(a->root, n->off);
    free(n);
}

static shm_alloc_node_t *shm_alloc_node_new(size_t off, size_t len, bool is_free)
{
    shm_alloc_node_t *n = calloc(1, sizeof(*n));

    if (n) {
        n->off = off;
        n->len = len;
        n->is_free = is_free;
    }
    return n;
}

static bool shm_alloc_is_pow2(size_t x) { return x && !(x & (x - 1)); }

/* ---- API ---- */

shm_alloc_t *shm_alloc_create(size_t size, size_t min_align)
{
    shm_alloc_t *a;

    if (min_align < 16 || !shm_alloc_is_pow2(min_align))
        return NULL;
    /* A tail shorter than min_align could never hold a block. */
    size &= ~(min_align - 1);
    if (size == 0)
        return NULL;

    a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->size = size;
    a->min_align = min_align;
    a->head = shm_alloc_node_new(0, size, true);
    if (!a->head) {
        free(a);
        return NULL;
    }
    a->root = shm_alloc_tree_insert(NULL, a->head);
    a->nfree = 1;
    return a;
}

void shm_alloc_destroy(shm_alloc_t *a)
{
    shm_alloc_node_t *n, *next;

    if (!a)
        return;
    for (n = a->head; n; n = next) {
        next = n->next;
        free(n);
    }
    free(a);
}

size_t shm_alloc_alloc(shm_alloc_t *a, size_t bytes, size_t align)
{
    shm_alloc_node_t *b, *live, *gap_n = NULL, *tail_n = NULL;
    size_t need, gap = 0, tail;

    if (!a || bytes == 0)
        return SHM_ALLOC_FAIL;
    if (align == 0)
        align = a->min_align;
    if (!shm_alloc_is_pow2(align))
        return SHM_ALLOC_FAIL;
    if (align < a->min_align)
        align = a->min_align;
    /* size is a multiple of min_align, so after this check rounding up cannot wrap. */
    if (bytes > a->size)
        return SHM_ALLOC_FAIL;
    need = (bytes + a->min_align - 1) & ~(a->min_align - 1);

    /* A candidate with len >= need may still be too short once its start is aligned up; then
       move on to the next candidate. Only happens when align > min_align. */
    for (b = shm_alloc_tree_first_fit(a->root, 0, need); b;
         b = shm_alloc_tree_first_fit(a->root, b->off + 1, need)) {
        gap = (align - (b->off & (align - 1))) & (align - 1);
        if (gap < b->len && b->len - gap >= need)
            break;
    }
    if (!b)
        return SHM_ALLOC_FAIL;
    tail = b->len - gap - need;

    if (gap) {
        gap_n = shm_alloc_node_new(b->off + gap, need, false);
        if (!gap_n)
            return SHM_ALLOC_FAIL;
    }
    if (tail) {
        tail_n = shm_alloc_node_new(b->off + gap + need, tail, true);
        if (!tail_n) {
            free(gap_n);
            return SHM_ALLOC_FAIL;
        }
    }

    if (gap) {
        /* b stays free and shrinks to the leading gap; its left neighbour is live already. */
        live = gap_n;
        b->len = gap;
        shm_alloc_node_link(a, b, live);
    } else {
        live = b;
        b->is_free = false;
        b->len = need;
        a->nfree--;
    }
    if (tail) {
        shm_alloc_node_link(a, live, tail_n);
        a->nfree++;
    }
    shm_alloc_tree_touch(a->root, b->off);
    a->nlive++;
    a->used += need;
    return live->off;
}

int shm_alloc_free(shm_alloc_t *a, size_t off)
{
    shm_alloc_node_t *n, *keep;

    if (!a)
        return -1;
    n = shm_alloc_tree_find(a->root, off);
    if (!n || n->is_free)
        return -1;

    a->used -= n->len;
    a->nlive--;
    a->nfree++;
    n->is_free = true;
    keep = n;
    if (n->next && n->next->is_free) {
        n->len += n->next->len;
        shm_alloc_node_drop(a, n->next);
        a->nfree--;
    }
    if (n->prev && n->prev->is_free) {
        keep = n->prev;
        keep->len += n->len;
        shm_alloc_node_drop(a, n);
        a->nfree--;
    }
    shm_alloc_tree_touch(a->root, keep->off);
    return 0;
}

size_t shm_alloc_block_size(const shm_alloc_t *a, size_t off)
{
    shm_alloc_node_t *n;

    if (!a)
        return 0;
    n = shm_alloc_tree_find(a->root, off);
    return n && !n->is_free ? n->len : 0;
}

size_t shm_alloc_resize(shm_alloc_t *a, size_t off, size_t bytes)
{
    shm_alloc_node_t *n, *nx;
    size_t need;

    if (!a || bytes == 0 || bytes > a->size)
        return SHM_ALLOC_FAIL;
    n = shm_alloc_tree_find(a->root, off);
    if (!n || n->is_free)
        return SHM_ALLOC_FAIL;
    need = (bytes + a->min_align - 1) & ~(a->min_align - 1);
    nx = n->next;

    if (need < n->len) {
        size_t rem = n->len - need;

        if (nx && nx->is_free) {
            /* Slide the free neighbour's start down; it stays between n and nx->next, so the
               tree order is unchanged. */
            nx->off -= rem;
            nx->len += rem;
        } else {
            shm_alloc_node_t *fr = shm_alloc_node_new(n->off + need, rem, true);

            if (!fr)
                return SHM_ALLOC_FAIL;
            shm_alloc_node_link(a, n, fr);
            a->nfree++;
            nx = fr;
        }
        n->len = need;
        a->used -= rem;
        shm_alloc_tree_touch(a->root, n->off);
        shm_alloc_tree_touch(a->root, nx->off);
    } else if (need > n->len) {
        size_t extra = need - n->len;

        if (!nx || !nx->is_free || nx->len < extra)
            return SHM_ALLOC_FAIL;
        n->len = need;
        a->used += extra;
        if (nx->len == extra) {
            shm_alloc_node_drop(a, nx);
            a->nfree--;
        } else {
            nx->off += extra;
            nx->len -= extra;
            shm_alloc_tree_touch(a->root, nx->off);
        }
        shm_alloc_tree_touch(a->root, n->off);
    }
    return off;
}

void shm_alloc_stats(const shm_alloc_t *a, shm_alloc_stats_t *st_p)
{
    shm_alloc_stats_t st = {0};

    if (!a || !st_p)
        return;
    st.size = a->size;
    st.used = a->used;
    st.free_total = a->size - a->used;
    st.largest_free = shm_alloc_maxf(a->root);
    st.nblocks_live = a->nlive;
    st.nblocks_free = a->nfree;
    *st_p = st;
}

/* Checks tree shape and cached fields, and that in-order equals list order; returns node count
   or -1. *cur_p walks the list in step with the in-order traversal. */
static long shm_alloc_check_tree(const shm_alloc_node_t *t, const shm_alloc_node_t **cur_p)
{
    long nl, nr;
    int hl, hr;
    size_t m;

    if (!t)
        return 0;
    nl = shm_alloc_check_tree(t->left, cur_p);
    if (nl < 0 || *cur_p != t)
        return -1;
    *cur_p = t->next;
    nr = shm_alloc_check_tree(t->right, cur_p);
    if (nr < 0)
        return -1;

    hl = shm_alloc_height(t->left);
    hr = shm_alloc_height(t->right);
    if (t->height != 1 + (hl > hr ? hl : hr) || hl - hr > 1 || hr - hl > 1)
        return -1;
    m = t->is_free ? t->len : 0;
    if (shm_alloc_maxf(t->left) > m)
        m = shm_alloc_maxf(t->left);
    if (shm_alloc_maxf(t->right) > m)
        m = shm_alloc_maxf(t->right);
    if (t->max_free != m)
        return -1;
    return nl + nr + 1;
}

int shm_alloc_check(const shm_alloc_t *a)
{
    const shm_alloc_node_t *n, *prev = NULL, *cur;
    size_t expect = 0, used = 0, nlive = 0, nfree = 0, largest = 0;
    long ntree;

    if (!a || !a->head)
        return -1;
    for (n = a->head; n; prev = n, n = n->next) {
        if (n->prev != prev || n->off != expect || n->len == 0 || n->len > a->size - n->off)
            return -1;
        if ((n->off | n->len) & (a->min_align - 1))
            return -1;
        if (n->is_free) {
            if (prev && prev->is_free)
                return -1;
            nfree++;
            if (n->len > largest)
                largest = n->len;
        } else {
            nlive++;
            used += n->len;
        }
        expect = n->off + n->len;
    }
    if (expect != a->size || used != a->used || nlive != a->nlive || nfree != a->nfree)
        return -1;

    cur = a->head;
    ntree = shm_alloc_check_tree(a->root, &cur);
    if (ntree < 0 || cur != NULL || (size_t)ntree != nlive + nfree)
        return -1;
    if (shm_alloc_maxf(a->root) != largest)
        return -1;
    return 0;
}

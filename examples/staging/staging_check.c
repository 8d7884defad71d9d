/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checks a staging server's file against what the PEs were told:
 *   staging_check OUTFILE [ACKLOG.PE ...]
 * The file must be whole records only (no torn tail: the server was stopped
 * cleanly, or restarted and cut it), each record's payload must be exactly
 * its (PE, step)'s pattern with the header's sum, no (PE, step) may appear
 * twice, and every "PE STEP" line of the ack logs (steps the server
 * acknowledged) must have its record. Prints the counts; exit 0 when all hold.
 */
#include <stdio.h>
#include <stdlib.h>

#include "staging.h"
#include "staging_file.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUTFILE [ACKLOG.PE ...]\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    void *buf = malloc(STAGE_MAX_BYTES);
    stage_set_t set = {0};
    stage_scan_t sc;
    if (f == NULL || buf == NULL || stage_scan(f, buf, &set, 1, &sc) != 0) {
        perror(argv[1]);
        return 2;
    }
    fclose(f);
    int bad = 0;
    if (sc.end != sc.size) {
        printf("FAIL: %s: %llu bytes after the last complete record (at %llu)\n", argv[1],
               (unsigned long long)(sc.size - sc.end), (unsigned long long)sc.end);
        bad = 1;
    }
    if (sc.dups) {
        printf("FAIL: %llu records duplicate an earlier (PE, step)\n",
               (unsigned long long)sc.dups);
        bad = 1;
    }
    if (sc.bad_words) {
        printf("FAIL: %llu records hold the wrong data\n", (unsigned long long)sc.bad_words);
        bad = 1;
    }
    unsigned long long acks = 0, lost = 0;
    for (int i = 2; i < argc; i++) {
        FILE *a = fopen(argv[i], "r");
        if (a == NULL) {
            perror(argv[i]);
            return 2;
        }
        char line[128];
        while (fgets(line, sizeof(line), a)) {
            unsigned pe, step;
            if (sscanf(line, "%u %u", &pe, &step) != 2) {
                printf("FAIL: %s: not \"PE STEP\": %s", argv[i], line);
                bad = 1;
                continue;
            }
            acks++;
            if (!stage_set_has(&set, pe, step)) {
                if (lost++ < 10)
                    printf("FAIL: PE %u step %u was acknowledged but is not in %s\n", pe, step,
                           argv[1]);
                bad = 1;
            }
        }
        fclose(a);
    }
    printf("staging_check: %llu records (%llu payload bytes), %llu duplicates, %llu with wrong "
           "data; %llu acknowledgements, %llu lost; %s\n",
           (unsigned long long)sc.records, (unsigned long long)sc.bytes,
           (unsigned long long)sc.dups, (unsigned long long)sc.bad_words, acks, lost,
           bad ? "FAIL" : "ok");
    free(buf);
    free(set.k);
    return bad;
}

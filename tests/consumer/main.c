/* A C program (compiled as C99) on the C interface alone: <kiln/kiln_capi.h> and the
 * kiln::capi library. Loads SPEC's op `scale`, checks that a missing op is an error with a
 * message, and reads the counters: needs no GPU. Args: SPEC CACHE_DIR */
#include <stdio.h>
#include <string.h>

#include <kiln/kiln_capi.h>

int main(int argc, char** argv) {
  char err[512] = "";
  kiln_runtime* rt = NULL;
  kiln_op* op = NULL;
  kiln_op* missing = NULL;
  uint64_t stats[4] = {1, 1, 1, 1};
  if (argc != 3) {
    fprintf(stderr, "usage: %s SPEC CACHE_DIR\n", argv[0]);
    return 2;
  }
  if (kiln_runtime_new("sm_90", argv[2], &rt, err, (int)sizeof err) != KILN_OK) {
    fprintf(stderr, "kiln_runtime_new: %s\n", err);
    return 1;
  }
  if (kiln_op_load(rt, argv[1], "scale", "fp32", &op, err, (int)sizeof err) != KILN_OK) {
    fprintf(stderr, "kiln_op_load: %s\n", err);
    return 1;
  }
  err[0] = '\0';
  if (kiln_op_load(rt, argv[1], "no_such_op", NULL, &missing, err, (int)sizeof err) == KILN_OK || err[0] == '\0') {
    fprintf(stderr, "kiln_op_load accepted a missing op or gave no message\n");
    return 1;
  }
  kiln_runtime_stats(rt, stats);
  kiln_op_free(op);
  kiln_runtime_free(rt);
  /* Nothing was compiled or launched: loading an op only checks it. */
  printf("kiln C interface: op loaded; missing op rejected (%s); %llu compiles\n", err,
         (unsigned long long)stats[2]);
  return stats[2] == 0 && stats[3] == 0 ? 0 : 1;
}

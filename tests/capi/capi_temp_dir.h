/* Removal of the temporary directories that the C API tests which open
 * stores create with mkdtemp. The including file defines _XOPEN_SOURCE 700
 * (for nftw) before its first #include. */
#ifndef CTXKIT_TESTS_CAPI_CAPI_TEMP_DIR_H_
#define CTXKIT_TESTS_CAPI_CAPI_TEMP_DIR_H_

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

static int capi_remove_entry(const char* path, const struct stat* st, int flag,
                             struct FTW* ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

/* Removes `dir` and everything below it, children first; symbolic links are
 * removed, never followed. */
static void remove_tree(const char* dir) {
  nftw(dir, capi_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif /* CTXKIT_TESTS_CAPI_CAPI_TEMP_DIR_H_ */

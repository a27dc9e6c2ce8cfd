/* Compiled by itself to prove <ctxkit/c.h> needs nothing before it and is
 * clean C99 (-std=c99 -pedantic -Werror) and C++ (as a .cc copy). */
#include "ctxkit/c.h"

int ctxkit_header_alone_check(void);
int ctxkit_header_alone_check(void) { return CTXKIT_OK; }

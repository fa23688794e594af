/* Which vector paths this build has. Every vector loop (SSE2 sixteen bytes a step; AVX2 where
 * the CPU has it, chosen at run time) has a byte loop beside it that gives the same answer, and
 * a build with -DASC_PORTABLE_SCAN has the byte loops only: `make portable` runs the specs on
 * such a build, so the two kinds of path are held to the same results. */
#ifndef ASCOPE_SIMD_H
#define ASCOPE_SIMD_H

#if defined(__SSE2__) && !defined(ASC_PORTABLE_SCAN)
#define ASC_SSE2 1
#include <emmintrin.h>
#if defined(__x86_64__) && defined(__GNUC__)
#define ASC_AVX2 1
#include <immintrin.h>
#endif
#endif

#endif

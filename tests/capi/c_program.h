/* SPDX-License-Identifier: Apache-2.0 */
/* Owns the entry point of c_program.c, a C11 user of the C ABI run by capi_tests. */
#ifndef SCENECRDT_TESTS_CAPI_C_PROGRAM_H_
#define SCENECRDT_TESTS_CAPI_C_PROGRAM_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when every check passed; 0 with the failed check in `error`. */
int capi_c_program(char* error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* SCENECRDT_TESTS_CAPI_C_PROGRAM_H_ */

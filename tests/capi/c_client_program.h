/* SPDX-License-Identifier: Apache-2.0 */
/* Owns the entry point of c_client_program.c, a C11 user of the C ABI's client run by
 * capi_client_tests against a running server. */
#ifndef SCENECRDT_TESTS_CAPI_C_CLIENT_PROGRAM_H_
#define SCENECRDT_TESTS_CAPI_C_CLIENT_PROGRAM_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Joins `scene` on `url` (a comma-separated list allowed) with two clients: 1 when every check
 * passed; 0 with the failed check in `error`. */
int capi_c_client_program(const char* url, const char* scene, char* error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* SCENECRDT_TESTS_CAPI_C_CLIENT_PROGRAM_H_ */

# The POSIX port with the handshake in slices, on the host (issue 38):
#   job_sliced  test/posix_sliced/job_sliced.c: a compression job over TLS
#               to the fixture with cfg.ecp_max_ops set, against mbedTLS 2.28
#               built from source with MBEDTLS_ECP_RESTARTABLE (Debian's
#               libmbedtls, which the POSIX port links elsewhere, lacks it);
#               prints the longest poll's CPU time with and without slices
# The sources are the ones port/lwip/fetch_sources.sh fetches (`make test`:
# build/third_party, cache variable CTXC_NET_SOURCES, as lwip_sys.cmake).
# Without them the test is still registered and reports itself skipped.
set(_ps_here "${CMAKE_CURRENT_LIST_DIR}")
set(_ps_mb "${CTXC_NET_SOURCES}/mbedtls")
if(NOT CTXC_NET_SOURCES OR NOT EXISTS "${_ps_mb}/library/ssl_tls.c")
    set(_ps_why "no mbedTLS sources (mbedtls/library) in CTXC_NET_SOURCES='${CTXC_NET_SOURCES}' (`make test` fetches them into build/third_party: port/lwip/fetch_sources.sh)")
    message(STATUS "job_sliced: skipped, ${_ps_why}")
    add_test(NAME job_sliced
        COMMAND sh -c "echo \"job_sliced: SKIP: $1\"; exit 77" sh "${_ps_why}")
    set_tests_properties(job_sliced PROPERTIES
        SKIP_RETURN_CODE 77 LABELS "integration;sliced")
    return()
endif()

find_package(Threads REQUIRED)
file(GLOB _ps_mb_sources "${_ps_mb}/library/*.c")
# third-party code: without the project's warnings
add_library(job_sliced_mbedtls STATIC ${_ps_mb_sources})
target_include_directories(job_sliced_mbedtls PUBLIC "${_ps_here}"
    "${_ps_mb}/include")
target_compile_definitions(job_sliced_mbedtls PUBLIC
    "MBEDTLS_USER_CONFIG_FILE=\"posix_sliced_mbedtls_user.h\"")
target_compile_options(job_sliced_mbedtls PRIVATE -O2 -w)

# the POSIX port compiled against it (the project's warnings)
add_executable(job_sliced "${_ps_here}/job_sliced.c"
    "${CMAKE_SOURCE_DIR}/port/posix/ctxc_transport_posix.c"
    "${CMAKE_SOURCE_DIR}/port/posix/ctxc_port_posix.c")
target_include_directories(job_sliced PRIVATE "${CMAKE_SOURCE_DIR}/port/posix"
    "${CMAKE_CURRENT_SOURCE_DIR}/integration")
target_include_directories(job_sliced SYSTEM PRIVATE "${CMOCKA_INCLUDE_DIR}")
target_compile_definitions(job_sliced PRIVATE
    "CTXC_FIXTURE_DIR=\"${CTXC_FIXTURE_DIR}\"")
target_compile_options(job_sliced PRIVATE ${CTXC_TEST_CFLAGS})
target_link_libraries(job_sliced PRIVATE job_sliced_mbedtls ${CTXC_LIB}
    "${CMOCKA_LIBRARY}" Threads::Threads ${CTXC_LIBM})
set_target_properties(job_sliced PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/integration")
add_test(NAME job_sliced COMMAND $<TARGET_FILE:job_sliced>)
set_tests_properties(job_sliced PROPERTIES
    FIXTURES_REQUIRED "ctxc_https;ctxc_certs"
    ENVIRONMENT "CTXC_FIXTURE_DIR=${CTXC_FIXTURE_DIR}"
    LABELS "integration;sliced"
    WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")

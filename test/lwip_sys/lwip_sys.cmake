# port/lwip with an OS (NO_SYS=0), on the host (test/lwip_sys/lwip_nosys0.c):
#   lwip_nosys0       built with -fsanitize=thread against the _tsan library
#                     (a report fails the run: halt_on_error, exitcode 66)
#   lwip_nosys0_asan  the same with AddressSanitizer + UBSan (_asan library)
# lwIP 2.1.3 (core, IPv4, altcp, altcp_tls_mbedtls, the tcpip thread) with
# test/lwip_sys/lwipopts.h over the POSIX sys_arch in Debian's lwip/port/,
# mbedTLS 2.28 with test/lwip_sys/lwip_sys_mbedtls_config.h, and
# port/lwip/ctxc_transport_lwip.c + ctxc_lwip_tls_mem.c, all compiled per
# sanitizer. The sources are the ones port/lwip/fetch_sources.sh fetches
# (`make test`: build/third_party, cache variable CTXC_NET_SOURCES). Without
# them both tests are still registered and report themselves skipped with
# the reason (never a silent pass). Needs the ctest fixture ctxc_certs only
# (the server runs inside the test's own lwIP stack, on its loopback netif).
set(CTXC_NET_SOURCES "" CACHE PATH "lwIP 2.1.3 and mbedTLS 2.28 sources (DIR/lwip, DIR/mbedtls; port/lwip/fetch_sources.sh DIR)")
set(_ls_here "${CMAKE_CURRENT_LIST_DIR}")
set(_ls_lw "${CTXC_NET_SOURCES}/lwip")
set(_ls_mb "${CTXC_NET_SOURCES}/mbedtls")
set(_ls_variants tsan asan)
set(_ls_flags_tsan -fsanitize=thread -g)
set(_ls_flags_asan ${CTXC_SANITIZER_FLAGS})
set(_ls_test_tsan lwip_nosys0)
set(_ls_test_asan lwip_nosys0_asan)

if(NOT CTXC_NET_SOURCES OR NOT EXISTS "${_ls_lw}/src/core/tcp.c" OR
   NOT EXISTS "${_ls_lw}/port/sys_arch.c" OR NOT EXISTS "${_ls_mb}/library/ssl_tls.c")
    set(_ls_why "no lwIP/mbedTLS sources (lwip/src, lwip/port/sys_arch.c, mbedtls/library) in CTXC_NET_SOURCES='${CTXC_NET_SOURCES}' (`make test` fetches them into build/third_party: port/lwip/fetch_sources.sh)")
    message(STATUS "lwip_nosys0: skipped, ${_ls_why}")
    foreach(v IN LISTS _ls_variants)
        add_test(NAME ${_ls_test_${v}}
            COMMAND sh -c "echo \"$1: SKIP: $2\"; exit 77" sh ${_ls_test_${v}} "${_ls_why}")
        set_tests_properties(${_ls_test_${v}} PROPERTIES
            SKIP_RETURN_CODE 77 LABELS "integration;${v}")
    endforeach()
    return()
endif()

file(GLOB _ls_mb_sources "${_ls_mb}/library/*.c")
set(_ls_lw_sources
    core/init.c core/def.c core/dns.c core/inet_chksum.c core/ip.c core/mem.c
    core/memp.c core/netif.c core/pbuf.c core/raw.c core/stats.c core/sys.c
    core/tcp.c core/tcp_in.c core/tcp_out.c core/timeouts.c core/udp.c
    core/altcp.c core/altcp_alloc.c core/altcp_tcp.c
    core/ipv4/icmp.c core/ipv4/ip4.c core/ipv4/ip4_addr.c core/ipv4/ip4_frag.c
    api/tcpip.c api/err.c apps/altcp_tls/altcp_tls_mbedtls.c)
list(TRANSFORM _ls_lw_sources PREPEND "${_ls_lw}/src/")
list(APPEND _ls_lw_sources "${_ls_lw}/port/sys_arch.c")
set(_ls_includes "${_ls_here}" "${_ls_lw}/src/include" "${_ls_lw}/port/include"
    "${_ls_lw}/src/apps/altcp_tls" "${_ls_mb}/include")
set(_ls_defs "MBEDTLS_CONFIG_FILE=\"lwip_sys_mbedtls_config.h\"")
find_package(Threads REQUIRED)

foreach(v IN LISTS _ls_variants)
    set(lib "${CTXC_LIB}_${v}")
    if(NOT TARGET ${lib})
        continue()
    endif()
    set(flags ${_ls_flags_${v}})
    set(exe ${_ls_test_${v}})
    # third-party code: without the project's warnings
    add_library(${exe}_third_party OBJECT ${_ls_mb_sources} ${_ls_lw_sources})
    target_include_directories(${exe}_third_party PRIVATE ${_ls_includes})
    target_compile_definitions(${exe}_third_party PRIVATE ${_ls_defs} _GNU_SOURCE)
    target_compile_options(${exe}_third_party PRIVATE -O1 ${flags} -w)
    # port/lwip as the board builds it (the project's warnings)
    add_executable(${exe}
        "${_ls_here}/lwip_nosys0.c"
        "${CMAKE_SOURCE_DIR}/port/lwip/ctxc_transport_lwip.c"
        "${CMAKE_SOURCE_DIR}/port/lwip/ctxc_lwip_tls_mem.c"
        $<TARGET_OBJECTS:${exe}_third_party>)
    target_include_directories(${exe} PRIVATE "${CMAKE_SOURCE_DIR}/port/lwip")
    target_include_directories(${exe} SYSTEM PRIVATE ${_ls_includes})
    target_compile_definitions(${exe} PRIVATE ${_ls_defs}
        "CTXC_FIXTURE_DIR=\"${CTXC_FIXTURE_DIR}\"")
    target_compile_options(${exe} PRIVATE ${CTXC_TEST_CFLAGS} ${CTXC_WARNINGS} ${flags})
    target_link_options(${exe} PRIVATE ${flags}
        -Wl,--wrap=mbedtls_ssl_read -Wl,--wrap=mbedtls_ecdh_read_params
        -Wl,--wrap=mbedtls_calloc -Wl,--wrap=mbedtls_ssl_handshake
        -Wl,--wrap=mbedtls_ssl_write)
    target_link_libraries(${exe} PRIVATE ${lib} Threads::Threads ${CTXC_LIBM})
    set_target_properties(${exe} PROPERTIES
        RUNTIME_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/integration")
    add_test(NAME ${exe} COMMAND $<TARGET_FILE:${exe}>)
    set(env "CTXC_FIXTURE_DIR=${CTXC_FIXTURE_DIR}")
    if(v STREQUAL "tsan")
        list(APPEND env "TSAN_OPTIONS=halt_on_error=1:exitcode=66:second_deadlock_stack=1")
    else()
        list(APPEND env "ASAN_OPTIONS=abort_on_error=0:detect_stack_use_after_return=1:strict_string_checks=1"
                        "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
    endif()
    set_tests_properties(${exe} PROPERTIES
        FIXTURES_REQUIRED ctxc_certs
        ENVIRONMENT "${env}"
        SKIP_RETURN_CODE 77
        TIMEOUT 300
        LABELS "integration;${v}"
        WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
endforeach()

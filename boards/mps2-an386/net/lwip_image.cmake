# The lwIP image (issue 17), included by the board's CMakeLists.txt:
#   mbedtls228        mbedTLS 2.28 with net/ctxc_mbedtls_config.h
#   lwip213           lwIP 2.1.3 (core, IPv4, Ethernet, altcp, the
#                     altcp_tls_mbedtls adapter) with net/lwipopts.h
#   <name>_port_lwip  port/lwip: the transport over altcp, its TLS memory
#   ctxc_lwip.elf     llm_scenario/ + lan9118.c + net/: middle-out over TLS
#                     to the fixture (run by test/embedded/lwip_image.sh)
# The sources come from Debian (port/lwip/fetch_sources.sh, run by
# `make cortex-m4` / `make test` into build/third_party): cache variable
# CTXC_NET_SOURCES. Without them the image is skipped with a message.
set(CTXC_NET_SOURCES "" CACHE PATH "lwIP 2.1.3 and mbedTLS 2.28 sources (DIR/lwip, DIR/mbedtls; port/lwip/fetch_sources.sh DIR)")
set(_lw "${CTXC_NET_SOURCES}/lwip")
set(_mb "${CTXC_NET_SOURCES}/mbedtls")
if(NOT CTXC_NET_SOURCES OR NOT EXISTS "${_lw}/src/core/tcp.c" OR NOT EXISTS "${_mb}/library/ssl_tls.c")
    message(STATUS "lwIP image: skipped, no lwIP/mbedTLS sources in CTXC_NET_SOURCES='${CTXC_NET_SOURCES}' "
                   "(`make cortex-m4` or `make test` fetch them: port/lwip/fetch_sources.sh)")
    return()
endif()

set(_net "${CMAKE_CURRENT_SOURCE_DIR}/net")
set(_mbedtls_def "MBEDTLS_CONFIG_FILE=\"ctxc_mbedtls_config.h\"")
# The TLS profile (net/ctxc_mbedtls_config.h): production (default) or lab.
set(MPS2_TLS_PROFILE "production" CACHE STRING "TLS profile of the lwIP image: production or lab")
set_property(CACHE MPS2_TLS_PROFILE PROPERTY STRINGS production lab)
if(MPS2_TLS_PROFILE STREQUAL "lab")
    list(APPEND _mbedtls_def MPS2_TLS_PROFILE_LAB)
elseif(NOT MPS2_TLS_PROFILE STREQUAL "production")
    message(FATAL_ERROR "MPS2_TLS_PROFILE must be production or lab, not '${MPS2_TLS_PROFILE}'")
endif()

# mbedTLS: every library source (what the config leaves out compiles to
# nothing); third-party code, built without the project's warnings.
file(GLOB _mb_sources "${_mb}/library/*.c")
add_library(mbedtls228 STATIC ${_mb_sources})
target_include_directories(mbedtls228 SYSTEM PUBLIC "${_mb}/include")
target_include_directories(mbedtls228 PUBLIC "${_net}")
target_compile_definitions(mbedtls228 PUBLIC ${_mbedtls_def})
target_compile_options(mbedtls228 PRIVATE ${CTXC_TARGET_CFLAGS} -w)

set(_lw_sources
    core/init.c core/def.c core/dns.c core/inet_chksum.c core/ip.c core/mem.c
    core/memp.c core/netif.c core/pbuf.c core/raw.c core/stats.c core/sys.c
    core/tcp.c core/tcp_in.c core/tcp_out.c core/timeouts.c core/udp.c
    core/altcp.c core/altcp_alloc.c core/altcp_tcp.c
    core/ipv4/etharp.c core/ipv4/icmp.c core/ipv4/ip4.c core/ipv4/ip4_addr.c
    core/ipv4/ip4_frag.c netif/ethernet.c apps/altcp_tls/altcp_tls_mbedtls.c apps/sntp/sntp.c)
list(TRANSFORM _lw_sources PREPEND "${_lw}/src/")
add_library(lwip213 STATIC ${_lw_sources})
target_include_directories(lwip213 SYSTEM PUBLIC "${_lw}/src/include" "${_lw}/src/apps/altcp_tls")
target_include_directories(lwip213 PUBLIC "${_net}")
target_compile_options(lwip213 PRIVATE ${CTXC_TARGET_CFLAGS} -w)
target_link_libraries(lwip213 PUBLIC mbedtls228)
# altcp_tls_mbedtls_mem and the mbedTLS allocator stubs are in port/lwip
# (ctxc_lwip_tls_mem.c): static libraries that need each other
target_link_libraries(mbedtls228 INTERFACE ${CTXC_PROJECT_NAME}_port_lwip)
target_link_libraries(lwip213 INTERFACE ${CTXC_PROJECT_NAME}_port_lwip)

# port/lwip, with the project's warnings
file(GLOB _port_lwip_sources CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/port/lwip/*.c")
add_library(${CTXC_PROJECT_NAME}_port_lwip STATIC ${_port_lwip_sources})
target_include_directories(${CTXC_PROJECT_NAME}_port_lwip PUBLIC "${CMAKE_SOURCE_DIR}/port/lwip")
target_compile_options(${CTXC_PROJECT_NAME}_port_lwip PRIVATE ${CTXC_TARGET_CFLAGS} ${CTXC_WARNINGS})
target_link_libraries(${CTXC_PROJECT_NAME}_port_lwip PUBLIC ${CTXC_PROJECT_NAME} lwip213)
# the port's mbedTLS hooks (ctxc_transport_lwip.h: errors lwIP 2.1.3 drops,
# the key exchange's group, the pool's failed allocation)
target_link_options(${CTXC_PROJECT_NAME}_port_lwip INTERFACE
    -Wl,--wrap=mbedtls_ssl_read -Wl,--wrap=mbedtls_ecdh_read_params
    -Wl,--wrap=mbedtls_calloc -Wl,--wrap=mbedtls_ssl_handshake
    -Wl,--wrap=mbedtls_ssl_write)

# the image: the example session only (no seeded histories)
add_custom_command(
    OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/lwip_data.c"
    COMMAND "${CTXC_PYTHON3}" "${_scn}/gen_histories.py"
            "${CMAKE_CURRENT_BINARY_DIR}/lwip_data.c" "${_example}" 0
    DEPENDS "${_scn}/gen_histories.py" "${_example}"
    COMMENT "lwIP image: the example session as a C array"
    VERBATIM)
# The trust store: anchors picked by name from Debian's ca-certificates
# (net/trust_store.txt, or MPS2_TRUST_STORE_LIST), made at build time into
# the .ctxc_ca flash area; never committed. Tests overwrite the area with
# their own roots (test/embedded/lwip_ca_slot.py).
set(MPS2_TRUST_STORE_LIST "${_net}/trust_store.txt" CACHE FILEPATH
    "names of the lwIP image's trust anchors (Debian ca-certificates)")
set(MPS2_CA_CERT_DIR "/usr/share/ca-certificates/mozilla" CACHE PATH
    "Debian ca-certificates' certificate files (apt-get install ca-certificates)")
file(STRINGS "${_net}/board_net.h" _slot_line REGEX "define MPS2_CA_SLOT_BYTES")
string(REGEX REPLACE ".*MPS2_CA_SLOT_BYTES +([0-9]+).*" "\\1" _slot_bytes "${_slot_line}")
add_custom_command(
    OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/trust_store.c"
    COMMAND "${CTXC_PYTHON3}" "${_net}/gen_trust_store.py" "${MPS2_TRUST_STORE_LIST}"
            "${MPS2_CA_CERT_DIR}" ${_slot_bytes} "${CMAKE_CURRENT_BINARY_DIR}/trust_store.c"
    DEPENDS "${_net}/gen_trust_store.py" "${MPS2_TRUST_STORE_LIST}" "${_net}/board_net.h"
    COMMENT "lwIP image: the trust store from ca-certificates"
    VERBATIM)
# The image's stack: its own budget (MPS2_LWIP_STACK_BYTES, board_net.h, set
# from the measured high-water with a margin; docs/device.md "Budgets"), not
# project.yml's stack of the scenario image.
file(STRINGS "${_net}/board_net.h" _lwip_stack_line REGEX "define MPS2_LWIP_STACK_BYTES")
string(REGEX REPLACE ".*MPS2_LWIP_STACK_BYTES +([0-9]+).*" "\\1" _lwip_stack "${_lwip_stack_line}")
if(NOT _lwip_stack MATCHES "^[0-9]+$")
    message(FATAL_ERROR "net/board_net.h: no MPS2_LWIP_STACK_BYTES number")
endif()
add_executable(ctxc_lwip
    llm_scenario/llm_main.c common/image_util.c net/net_board.c lan9118.c startup.c
    "${CMAKE_CURRENT_BINARY_DIR}/trust_store.c"
    "${CMAKE_CURRENT_BINARY_DIR}/lwip_data.c")
target_include_directories(ctxc_lwip PRIVATE "${_net}")
set_target_properties(ctxc_lwip PROPERTIES SUFFIX ".elf"
    LINK_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/mps2-an386.ld")
target_include_directories(ctxc_lwip PRIVATE "${_scn}" "${CMAKE_CURRENT_SOURCE_DIR}")
target_compile_options(ctxc_lwip PRIVATE ${CTXC_TARGET_CFLAGS} ${CTXC_WARNINGS})
target_link_options(ctxc_lwip PRIVATE ${CTXC_TARGET_CFLAGS} -nostartfiles
    "-T${CMAKE_CURRENT_SOURCE_DIR}/mps2-an386.ld"
    "-Wl,--defsym=__flash_size=${_mem_flash}"
    "-Wl,--defsym=__ram_size=${_mem_ram}"
    "-Wl,--defsym=__stack_size=${_lwip_stack}"
    -Wl,--gc-sections
    "-Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/ctxc_lwip.map")
# a new number in board_net.h configures anew
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_net}/board_net.h")
target_link_libraries(ctxc_lwip PRIVATE
    ${CTXC_PROJECT_NAME}_port_lwip lwip213 mbedtls228
    ${CTXC_PROJECT_NAME}_port_romfs ${CTXC_PROJECT_NAME}
    -Wl,--start-group -lc -lrdimon -lgcc -Wl,--end-group)

# The footprint of the image (test/embedded/lwip_size.py): `lwip-size`
# prints the table, `lwip-readme-table` writes it into docs/footprint.md.
ctxc_target_tool(${CTXC_TARGET} size _lwip_size_tool)
add_custom_target(lwip-size
    COMMAND "${CTXC_PYTHON3}" "${CMAKE_SOURCE_DIR}/test/embedded/lwip_size.py"
            "${_lwip_size_tool}" "$<TARGET_FILE:ctxc_lwip>"
            "${CMAKE_CURRENT_BINARY_DIR}/ctxc_lwip.map"
    DEPENDS ctxc_lwip VERBATIM)
add_custom_target(lwip-readme-table
    COMMAND "${CTXC_PYTHON3}" "${CMAKE_SOURCE_DIR}/test/embedded/lwip_size.py"
            "${_lwip_size_tool}" "$<TARGET_FILE:ctxc_lwip>"
            "${CMAKE_CURRENT_BINARY_DIR}/ctxc_lwip.map" "${CMAKE_SOURCE_DIR}/docs/footprint.md"
    DEPENDS ctxc_lwip VERBATIM)

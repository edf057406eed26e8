# The lwIP image (boards/mps2-an386/net, issue 17), run from the host test
# tree against the HTTPS fixture (ctest fixtures ctxc_https + ctxc_certs):
#   lwip_target          test/embedded/lwip_image.py: the fixture's CA and
#                        the front-end server's roots into the image's trust
#                        store, an NTP responder and the front-end server
#                        (test/fixtures/frontend_server.go, Go) started, the
#                        image under the emulator with -nic user,model=lan9118,
#                        its output, the front end's log and the fixture's
#                        record checked (label target); skipped (exit 77)
#                        only when QEMU has no user networking
#   lwip_target_untrusted_ca  its self-test: with a CA that signed none of
#                        the fixture's certificates every handshake is
#                        refused, the image fails, no request is recorded
#   lwip_target_providers  the device's endpoint from its command line
#                        (--call --provider --base-url --model --key
#                        --stream/--no-stream): openai, anthropic and gemini
#                        formats of the fixture, streamed and not; and a
#                        name only the configured DNS server (the test's
#                        responder, --dns) knows
#   lwip_target_trust_builtin / _corrupt / _smallpool  the trust store: the
#                        image as built (anchors of net/trust_store.txt from
#                        ca-certificates) parses them and refuses the
#                        fixture; a broken DER is "CA certificate 1 does not
#                        parse (...)"; a 6000-byte pool is "TLS pool too
#                        small (needed at least N bytes ...)"
#   lwip_target_lab      --lab: the image built with -DMPS2_TLS_PROFILE=lab
#                        (build/<t>-lab, `make test` builds it): the
#                        fixture's cases compress as in production with
#                        ECDHE-ECDSA-AES-128-GCM over P-256; a front end
#                        that ignores max_fragment_length (16 KiB records),
#                        the P-384 root chain, the P-384 root in the store
#                        and the RSA chain refused with clear errors
#   lwip_target_job      --job: the resumable job on the board, a voice turn
#                        every 200 ms of board time while the summary
#                        streams; the longest poll, the handshake's polls,
#                        the turns after the summary; faults with turns
#                        arriving leave original + turns byte for byte
#   symbols_lwip_image   no heap allocator linked into the image
#   footprint_lwip       the footprint table of the image (lwip_size.py)
#   footprint_lwip       the footprint rows (lwip_size.py) are read
# The image comes from the cross tree: cache variable CTXC_LWIP_IMAGE_<T>,
# default build/<t>/boards/mps2-an386/ctxc_lwip.elf; the lab profile's from
# CTXC_LWIP_LAB_IMAGE_<T>, default build/<t>-lab/boards/mps2-an386/ctxc_lwip.elf.
foreach(t IN LISTS CTXC_TARGETS)
    if(NOT MF_targets.${t}.board STREQUAL "boards/mps2-an386" OR
       NOT DEFINED MF_targets.${t}.emulator)
        continue()
    endif()
    string(TOUPPER "CTXC_LWIP_IMAGE_${t}" var)
    string(REPLACE "-" "_" var "${var}")
    set(${var} "${_build_root}/${t}/boards/mps2-an386/ctxc_lwip.elf"
        CACHE FILEPATH "the lwIP image of target ${t}, run by lwip_target")
    set(image "${${var}}")
    string(TOUPPER "CTXC_LWIP_LAB_IMAGE_${t}" labvar)
    string(REPLACE "-" "_" labvar "${labvar}")
    set(${labvar} "${_build_root}/${t}-lab/boards/mps2-an386/ctxc_lwip.elf"
        CACHE FILEPATH "the lwIP image of target ${t} in the lab TLS profile, run by lwip_target_lab")
    separate_arguments(emu UNIX_COMMAND "${MF_targets.${t}.emulator}")
    ctxc_target_tool(${t} objcopy objcopy)
    ctxc_target_tool(${t} nm nm)
    add_test(NAME lwip_target
        COMMAND python3 "${_here}/lwip_image.py" "${objcopy}" "${image}"
                "${CTXC_FIXTURE_DIR}"
                "${CMAKE_SOURCE_DIR}/boards/host/examples/coding-session.jsonl"
                ${emu})
    set_tests_properties(lwip_target PROPERTIES
        LABELS "target;embedded" TIMEOUT 600 SKIP_RETURN_CODE 77
        SKIP_REGULAR_EXPRESSION "lwip_image: SKIP:"
        FIXTURES_REQUIRED "ctxc_https;ctxc_certs"
        PASS_REGULAR_EXPRESSION "lwip_image: ok"
        FAIL_REGULAR_EXPRESSION "FAIL|FAULT")
    add_test(NAME lwip_target_untrusted_ca
        COMMAND python3 "${_here}/lwip_image.py" --untrusted-ca "${objcopy}" "${image}"
                "${CTXC_FIXTURE_DIR}"
                "${CMAKE_SOURCE_DIR}/boards/host/examples/coding-session.jsonl"
                ${emu})
    set_tests_properties(lwip_target_untrusted_ca PROPERTIES
        LABELS "target;embedded" TIMEOUT 120 SKIP_RETURN_CODE 77
        SKIP_REGULAR_EXPRESSION "lwip_image: SKIP:"
        FIXTURES_REQUIRED "ctxc_https;ctxc_certs"
        PASS_REGULAR_EXPRESSION "untrusted CA: 4 handshakes refused.*lwip_image: ok")
    # the device's endpoint from the command line: every provider format
    # of the fixture, streamed and not (six runs of the image with --call)
    add_test(NAME lwip_target_providers
        COMMAND python3 "${_here}/lwip_image.py" --providers "${objcopy}" "${image}"
                "${CTXC_FIXTURE_DIR}"
                "${CMAKE_SOURCE_DIR}/boards/host/examples/coding-session.jsonl"
                ${emu})
    set_tests_properties(lwip_target_providers PROPERTIES
        LABELS "target;embedded" TIMEOUT 600 SKIP_RETURN_CODE 77
        SKIP_REGULAR_EXPRESSION "lwip_image: SKIP:"
        FIXTURES_REQUIRED "ctxc_https;ctxc_certs"
        PASS_REGULAR_EXPRESSION "lwip_image: providers: .*lwip_image: ok")
    # the lab TLS profile at run time (issue 26): the fixture's cases, then
    # what the profile cannot do refused with clear errors
    add_test(NAME lwip_target_lab
        COMMAND python3 "${_here}/lwip_image.py" --lab "${objcopy}" "${${labvar}}"
                "${CTXC_FIXTURE_DIR}"
                "${CMAKE_SOURCE_DIR}/boards/host/examples/coding-session.jsonl"
                ${emu})
    set_tests_properties(lwip_target_lab PROPERTIES
        LABELS "target;embedded" TIMEOUT 600 SKIP_RETURN_CODE 77
        SKIP_REGULAR_EXPRESSION "lwip_image: SKIP:"
        FIXTURES_REQUIRED "ctxc_https;ctxc_certs"
        PASS_REGULAR_EXPRESSION "lwip_image: lab: the fixture's P-256 chain: .*lwip_image: ok"
        FAIL_REGULAR_EXPRESSION "FAIL|FAULT")
    # the resumable job on the board (issue 27): voice turns every 200 ms
    # of board time while the summary streams; faults with turns arriving
    add_test(NAME lwip_target_job
        COMMAND python3 "${_here}/lwip_image.py" --job "${objcopy}" "${image}"
                "${CTXC_FIXTURE_DIR}"
                "${CMAKE_SOURCE_DIR}/boards/host/examples/coding-session.jsonl"
                ${emu})
    set_tests_properties(lwip_target_job PROPERTIES
        LABELS "target;embedded" TIMEOUT 600 SKIP_RETURN_CODE 77
        SKIP_REGULAR_EXPRESSION "lwip_image: SKIP:"
        FIXTURES_REQUIRED "ctxc_https;ctxc_certs"
        PASS_REGULAR_EXPRESSION "lwip_image: job: .*lwip_image: ok"
        FAIL_REGULAR_EXPRESSION "FAIL|FAULT")
    # the trust store: the built-in anchors (ca-certificates) parse; a CA
    # that does not parse and a pool too small are told apart
    foreach(mode builtin corrupt smallpool)
        add_test(NAME lwip_target_trust_${mode}
            COMMAND python3 "${_here}/lwip_image.py" --trust=${mode} "${objcopy}" "${image}"
                    "${CTXC_FIXTURE_DIR}"
                    "${CMAKE_SOURCE_DIR}/boards/host/examples/coding-session.jsonl"
                    ${emu})
        set_tests_properties(lwip_target_trust_${mode} PROPERTIES
            LABELS "target;embedded" TIMEOUT 300 SKIP_RETURN_CODE 77
            SKIP_REGULAR_EXPRESSION "lwip_image: SKIP:"
            FIXTURES_REQUIRED "ctxc_https;ctxc_certs"
            PASS_REGULAR_EXPRESSION "lwip_image: trust ${mode}: .*lwip_image: ok")
    endforeach()
    add_test(NAME symbols_lwip_image
        COMMAND sh "${_here}/check_symbols.sh" "${nm}" "${image}")
    ctxc_target_tool(${t} size size)
    get_filename_component(_lwip_dir "${image}" DIRECTORY)
    add_test(NAME footprint_lwip
        COMMAND python3 "${_here}/lwip_size.py" "${size}" "${image}"
                "${_lwip_dir}/ctxc_lwip.map")
    set_tests_properties(symbols_lwip_image footprint_lwip PROPERTIES LABELS "embedded")
    set_tests_properties(footprint_lwip PROPERTIES
        PASS_REGULAR_EXPRESSION "\\| \\*\\*whole image\\*\\* \\| \\*\\*[0-9]+")
endforeach()

# The lwIP image's budgets (docs/device.md, "Budgets"; test/embedded/
# lwip_budget.py), from the output lwip_target leaves in the build tree
# (CTXC_LWIP_LOG, lwip_image.py; lwip_target is their fixture's setup):
#   lwip_budget               the run's stack and TLS pool high-water x 5/4
#                             within the image's stack and pool (read from
#                             the ELF with nm)
#   lwip_budget_selftest_stack / _pool  the same output against the largest
#                             budget the rule refuses (high-water x 5/4
#                             minus one byte): must fail
#   lwip_target_budget_selftest  the image's own check (its "budget:" line,
#                             a failed check): the --job run with budgets of
#                             1024 bytes (--budget-stack, --budget-pool,
#                             given in the emulator's -semihosting-config,
#                             which QEMU puts before lwip_image.py's
#                             arguments) must fail
# Included after lwip.cmake (it adds to lwip_target's properties only).
foreach(t IN LISTS CTXC_TARGETS)
    if(NOT MF_targets.${t}.board STREQUAL "boards/mps2-an386" OR
       NOT DEFINED MF_targets.${t}.emulator OR NOT TEST lwip_target)
        continue()
    endif()
    string(TOUPPER "CTXC_LWIP_IMAGE_${t}" var)
    string(REPLACE "-" "_" var "${var}")
    set(image "${${var}}")
    ctxc_target_tool(${t} nm nm)
    set(log "${CMAKE_CURRENT_BINARY_DIR}/lwip_target.log")
    set_property(TEST lwip_target APPEND PROPERTY ENVIRONMENT "CTXC_LWIP_LOG=${log}")
    set_property(TEST lwip_target APPEND PROPERTY FIXTURES_SETUP lwip_target_log)
    add_test(NAME lwip_budget
        COMMAND python3 "${_here}/lwip_budget.py" "${nm}" "${image}" "${log}")
    set_tests_properties(lwip_budget PROPERTIES
        LABELS "target;embedded" FIXTURES_REQUIRED lwip_target_log
        FAIL_REGULAR_EXPRESSION "FAIL" SKIP_RETURN_CODE 77)
    foreach(what stack pool)
        set(line "${what}")
        if(what STREQUAL "pool")
            set(line "tls pool")
        endif()
        add_test(NAME lwip_budget_selftest_${what}
            COMMAND sh "${_here}/scenario_expect_fail.sh"
                    "lwip_budget: ${line} .*FAIL: the high-water eats into the margin"
                    python3 "${_here}/lwip_budget.py" "${nm}" "${image}" "${log}"
                    --just-under=${what})
        set_tests_properties(lwip_budget_selftest_${what} PROPERTIES
            LABELS "target;embedded" FIXTURES_REQUIRED lwip_target_log
            SKIP_REGULAR_EXPRESSION "lwip_budget: SKIP:")
    endforeach()
    separate_arguments(emu UNIX_COMMAND "${MF_targets.${t}.emulator}")
    # the budgets' arguments before the image (the emulator ends with -kernel)
    list(GET emu -1 last)
    if(last STREQUAL "-kernel")
        list(REMOVE_AT emu -1)
    endif()
    list(APPEND emu -semihosting-config
         "arg=ctxc_lwip,arg=--budget-stack=1024,arg=--budget-pool=1024")
    if(last STREQUAL "-kernel")
        list(APPEND emu -kernel)
    endif()
    ctxc_target_tool(${t} objcopy objcopy)
    add_test(NAME lwip_target_budget_selftest
        COMMAND sh "${_here}/scenario_expect_fail.sh"
                "FAIL: budget: the stack's high-water x 5/4 exceeds"
                python3 "${_here}/lwip_image.py" --job "${objcopy}" "${image}"
                "${CTXC_FIXTURE_DIR}"
                "${CMAKE_SOURCE_DIR}/boards/host/examples/coding-session.jsonl"
                ${emu})
    set_tests_properties(lwip_target_budget_selftest PROPERTIES
        LABELS "target;embedded" TIMEOUT 300
        SKIP_REGULAR_EXPRESSION "lwip_image: SKIP:"
        FIXTURES_REQUIRED "ctxc_https;ctxc_certs")
endforeach()

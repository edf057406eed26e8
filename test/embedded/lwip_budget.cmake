# The lwIP image's budgets (docs/device.md, "Budgets"; test/embedded/
# lwip_budget.py), from the output lwip_target leaves in the build tree
# (CTXC_LWIP_LOG, lwip_image.py; lwip_target is their fixture's setup):
#   lwip_budget               the run's stack and TLS pool high-water x 5/4
#                             within the image's stack and pool (read from
#                             the ELF with nm)
#   lwip_budget_selftest_stack / _pool  the same output against the largest
#                             budget the rule refuses (high-water x 5/4
#                             minus one byte): must fail
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
        FAIL_REGULAR_EXPRESSION "FAIL")
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
            LABELS "target;embedded" FIXTURES_REQUIRED lwip_target_log)
    endforeach()
endforeach()

# The on-target scenario (boards/mps2-an386/scenario, issue 14), checked
# from the host test tree like the other cross checks:
#   scenario_host                the scenario compiled for the host passes
#   scenario_target              the image under the target's emulator
#                                (project.yml targets.<t>.emulator) passes:
#                                every check, every stack budget (label target)
#   scenario_target_vs_host      both print the same result tables (the
#                                histories' and the voice day's)
#   scenario_target_selftest     the image with --plant-fault (one export byte
#                                corrupted before its re-import check) fails
#   scenario_target_hardfault    the image with --hard-fault exits 3 after the
#                                HardFault handler's report
#   scenario_target_stack_selftest  the image with --stack-budget=64 fails
#                                (the budget check can fail)
#   scenario_host_selftest       the host build with --plant-fault fails
#   symbols_scenario_image       no heap allocator linked into the image
#   voice_target                 the voice profile's image (boards/mps2-an386/
#                                voice_profile) under the emulator passes;
#                                voice_target_selftest: with --plant-fault
#                                (a wrong API key) it fails
#   symbols_voice_image          no heap allocator in the voice image
#   flash_budget_<profile>       the library's flash in the profile (full:
#                                every object of the archive; voice, minimal:
#                                its share of the image, from the link map)
#                                within the board's MPS2_FLASH_<P>_BUDGET;
#                                flash_budget_<profile>_selftest: the check
#                                fails on a budget of 1 KiB
#   docs_generated_footprint     the generated blocks of docs/footprint.md
#                                and the README's footprint headline are
#                                what `make readme-tables` writes now
#                                (test/docs/check_generated.py); its
#                                _selftest: a changed block fails it
#   stack_static_<t>             the static stack summary (stack_static.py)
#                                of the cross library runs
#   index_code_<t>               the cross library has the index code its
#                                configuration asks for (check_index_code.py)
# The image comes from the cross tree (`make test` builds it before ctest):
# cache variable CTXC_SCENARIO_IMAGE_<T>, default
# build/<t>/boards/mps2-an386/ctxc_scenario.elf.
set(_scn_dir "${CMAKE_SOURCE_DIR}/boards/mps2-an386/scenario")
set(_scn_example "${CMAKE_SOURCE_DIR}/boards/host/examples/coding-session.jsonl")
set(_scn_seeds 6) # as boards/mps2-an386/CMakeLists.txt (CTXC_SCENARIO_SEEDS)
set(_scn_full 2)  # as boards/mps2-an386/CMakeLists.txt (CTXC_SCENARIO_FULL)
add_custom_command(
    OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/scenario_data.c"
    COMMAND python3 "${_scn_dir}/gen_histories.py"
            "${CMAKE_CURRENT_BINARY_DIR}/scenario_data.c" "${_scn_example}" ${_scn_seeds} ${_scn_full}
    DEPENDS "${_scn_dir}/gen_histories.py" "${_scn_example}"
    VERBATIM)
add_executable(scenario_host "${_scn_dir}/scenario.c" "${_scn_dir}/host_main.c"
               "${_scn_dir}/../common/image_util.c" "${_scn_dir}/../voice/voice_day.c"
               "${CMAKE_CURRENT_BINARY_DIR}/scenario_data.c")
target_include_directories(scenario_host PRIVATE "${_scn_dir}")
target_compile_options(scenario_host PRIVATE ${CTXC_TARGET_CFLAGS} ${CTXC_WARNINGS})
target_link_libraries(scenario_host PRIVATE ${CTXC_PROJECT_NAME}_port_romfs ${CTXC_PROJECT_NAME})

add_test(NAME scenario_host COMMAND scenario_host)
add_test(NAME scenario_host_selftest
    COMMAND sh "${_here}/scenario_expect_fail.sh" "FAIL: example import: export re-imports"
            $<TARGET_FILE:scenario_host> --plant-fault)
set_tests_properties(scenario_host scenario_host_selftest PROPERTIES LABELS "embedded")

foreach(t IN LISTS CTXC_TARGETS)
    if(NOT MF_targets.${t}.board STREQUAL "boards/mps2-an386" OR
       NOT DEFINED MF_targets.${t}.emulator)
        continue()
    endif()
    string(TOUPPER "CTXC_SCENARIO_IMAGE_${t}" var)
    string(REPLACE "-" "_" var "${var}")
    set(${var} "${_build_root}/${t}/boards/mps2-an386/ctxc_scenario.elf"
        CACHE FILEPATH "the scenario image of target ${t}, run by the scenario tests")
    set(image "${${var}}")
    separate_arguments(emu UNIX_COMMAND "${MF_targets.${t}.emulator}")
    ctxc_target_tool(${t} nm nm)

    add_test(NAME scenario_target COMMAND ${emu} "${image}")
    # the minimal profile (boards/mps2-an386/minimal): the image runs, and
    # what the library costs in it is read from its link map
    get_filename_component(_img_dir "${image}" DIRECTORY)
    add_test(NAME minimal_target COMMAND ${emu} "${_img_dir}/ctxc_minimal_app.elf")
    set_tests_properties(minimal_target PROPERTIES LABELS "embedded;target"
        PASS_REGULAR_EXPRESSION "minimal: ok")
    # storage placement: the minimal image puts its history and work area
    # in .noinit with CTXC_*_DEFINE_ATTR; the image's symbols say where
    ctxc_target_tool(${t} readelf readelf)
    add_test(NAME placement_minimal
        COMMAND python3 "${_here}/check_placement.py" "${nm}" "${readelf}"
                "${_img_dir}/ctxc_minimal_app.elf" .noinit
                hist_arena_ hist_slots_ work_scratch_ work_ops_ work_map_)
    set_tests_properties(placement_minimal PROPERTIES LABELS "embedded")
    # the caller-owned RAM beyond the history against the board's budget
    # (MPS2_RAM_BEYOND_HISTORY_BUDGET, boards/mps2-an386/board_sizes.h),
    # read from the RAM probe's object; and the check fails on 1 KiB
    file(STRINGS "${CMAKE_SOURCE_DIR}/boards/mps2-an386/board_sizes.h" _rb
         REGEX "^#define MPS2_RAM_BEYOND_HISTORY_BUDGET [0-9]+")
    string(REGEX REPLACE "^#define MPS2_RAM_BEYOND_HISTORY_BUDGET ([0-9]+).*"
           "\\1" _rb "${_rb}")
    set(_ram_obj "${_img_dir}/CMakeFiles/ram_probe.dir/ram_probe.c.obj")
    add_test(NAME ram_budget
        COMMAND sh "${_here}/ram_table.sh" "${nm}" "${_ram_obj}" "${_rb}")
    add_test(NAME ram_budget_selftest
        COMMAND sh "${_here}/ram_table.sh" "${nm}" "${_ram_obj}" 1024)
    set_tests_properties(ram_budget PROPERTIES LABELS "embedded"
        PASS_REGULAR_EXPRESSION "bytes of the budget of [0-9]+")
    set_tests_properties(ram_budget_selftest PROPERTIES LABELS "embedded"
        PASS_REGULAR_EXPRESSION "over the budget of 1024")
    # the voice profile (boards/mps2-an386/voice_profile): the image runs
    # (and fails with a planted fault), no heap allocator is linked
    set(_voice "${_img_dir}/ctxc_voice_app.elf")
    add_test(NAME voice_target COMMAND ${emu} "${_voice}")
    add_test(NAME voice_target_selftest
        COMMAND sh "${_here}/scenario_expect_fail.sh" "FAIL: voice: every request"
                ${emu} "${_voice}" -semihosting-config "arg=ctxc_voice_app,arg=--plant-fault")
    add_test(NAME symbols_voice_image
        COMMAND sh "${_here}/check_symbols.sh" "${nm}" "${_voice}")
    set_tests_properties(voice_target voice_target_selftest PROPERTIES
        LABELS "embedded;target" TIMEOUT 120)
    set_tests_properties(voice_target PROPERTIES
        PASS_REGULAR_EXPRESSION "voice: ok" FAIL_REGULAR_EXPRESSION "FAIL|FAULT")
    set_tests_properties(symbols_voice_image PROPERTIES LABELS "embedded")
    # the library's flash per profile against the board's budgets
    # (MPS2_FLASH_<P>_BUDGET, boards/mps2-an386/board_sizes.h): the whole
    # archive, the voice and the minimal image's share from their link
    # maps; and each check fails on 1 KiB
    string(TOUPPER "CTXC_LIB_${t}" _libvar)
    string(REPLACE "-" "_" _libvar "${_libvar}")
    ctxc_target_tool(${t} size _size)
    set(_flash_full "${${_libvar}}" "${_size}")
    set(_flash_voice "${_img_dir}/ctxc_voice_app.map")
    set(_flash_minimal "${_img_dir}/ctxc_minimal_app.map")
    foreach(p IN ITEMS full voice minimal)
        string(TOUPPER "${p}" _P)
        file(STRINGS "${CMAKE_SOURCE_DIR}/boards/mps2-an386/board_sizes.h" _fb
             REGEX "^#define MPS2_FLASH_${_P}_BUDGET [0-9]+")
        string(REGEX REPLACE "^#define MPS2_FLASH_${_P}_BUDGET ([0-9]+).*"
               "\\1" _fb "${_fb}")
        if(NOT _fb MATCHES "^[0-9]+$")
            message(FATAL_ERROR " boards/mps2-an386/board_sizes.h: no MPS2_FLASH_${_P}_BUDGET")
        endif()
        add_test(NAME flash_budget_${p}
            COMMAND python3 "${_here}/flash_profiles.py" --check=${p}
                    --budget=${_fb} ${_flash_${p}})
        add_test(NAME flash_budget_${p}_selftest
            COMMAND python3 "${_here}/flash_profiles.py" --check=${p}
                    --budget=1024 ${_flash_${p}})
        set_tests_properties(flash_budget_${p} PROPERTIES LABELS "embedded"
            PASS_REGULAR_EXPRESSION "the ${p} profile takes [0-9]+ bytes of flash of the budget of ${_fb}")
        set_tests_properties(flash_budget_${p}_selftest PROPERTIES LABELS "embedded"
            PASS_REGULAR_EXPRESSION "FAIL: flash_profiles: the ${p} profile takes [0-9]+ bytes of flash, over the budget of 1024")
    endforeach()
    # the generated blocks of docs/footprint.md and the README's headline
    # are what `make readme-tables` writes from these artifacts now
    # (test/docs/check_generated.py runs scenario_readme.py on copies of
    # the two documents and compares the blocks; not scenario-output, whose
    # tick counts depend on the machine's load). The self-test: the same
    # check over the flash-per-profile table, one line of it changed, fails.
    set(_readme_args "${image}" "${_img_dir}/ctxc_scenario.map"
        "${_build_root}/${t}/src/CMakeFiles/${CTXC_PROJECT_NAME}.dir" "${_size}"
        "--lib=${${_libvar}}" "--ram-object=${_ram_obj}" "--nm=${nm}"
        "--minimal=${_img_dir}/ctxc_minimal_app.elf"
        "--minimal-map=${_flash_minimal}"
        "--minimal-object=${_img_dir}/CMakeFiles/ctxc_minimal_app.dir/minimal/minimal.c.obj"
        "--voice-map=${_flash_voice}"
        "--budgets=${CMAKE_SOURCE_DIR}/boards/mps2-an386/board_sizes.h")
    add_test(NAME docs_generated_footprint
        COMMAND python3 "${CMAKE_SOURCE_DIR}/test/docs/check_generated.py"
                "${CMAKE_SOURCE_DIR}/docs/footprint.md:footprint-summary,profile-flash,library-flash,library-ram,scenario-stack,scenario-footprint"
                "${CMAKE_SOURCE_DIR}/README.md:footprint-headline"
                -- python3 "${_here}/scenario_readme.py" "{0}" ${_readme_args}
                "--readme={1}" ${emu})
    add_test(NAME docs_generated_footprint_selftest
        COMMAND python3 "${CMAKE_SOURCE_DIR}/test/docs/check_generated.py"
                "${CMAKE_SOURCE_DIR}/docs/footprint.md:profile-flash" --tamper
                -- python3 "${_here}/flash_profiles.py" "--lib=${${_libvar}}"
                "--size=${_size}" "--voice-map=${_flash_voice}"
                "--minimal-map=${_flash_minimal}"
                "--budgets=${CMAKE_SOURCE_DIR}/boards/mps2-an386/board_sizes.h"
                "--doc={0}")
    set_tests_properties(docs_generated_footprint PROPERTIES
        LABELS "docs;embedded;target" TIMEOUT 180
        PASS_REGULAR_EXPRESSION "check_generated: 7 blocks as the build writes them")
    set_tests_properties(docs_generated_footprint_selftest PROPERTIES
        LABELS "docs;embedded"
        PASS_REGULAR_EXPRESSION "FAIL: check_generated: [^\n]*footprint.md: block profile-flash differs")
    add_test(NAME footprint_minimal
        COMMAND python3 "${_here}/minimal_size.py" "${_img_dir}/ctxc_minimal_app.map"
                "${_img_dir}/ctxc_scenario.map")
    set_tests_properties(footprint_minimal PROPERTIES LABELS "embedded"
        PASS_REGULAR_EXPRESSION "ctxc_minimal_app.elf: libctxc [0-9]+ bytes of flash")
    add_test(NAME scenario_target_vs_host
        COMMAND sh "${_here}/scenario_compare.sh" $<TARGET_FILE:scenario_host> ${emu} "${image}")
    add_test(NAME scenario_target_selftest
        COMMAND sh "${_here}/scenario_expect_fail.sh" "FAIL: example import: export re-imports"
                ${emu} "${image}" -semihosting-config "arg=ctxc_scenario,arg=--plant-fault")
    add_test(NAME scenario_target_hardfault
        COMMAND sh "${_here}/scenario_expect_fail.sh" "FAULT: hard fault pc="
                ${emu} "${image}" -semihosting-config "arg=ctxc_scenario,arg=--hard-fault")
    add_test(NAME scenario_target_stack_selftest
        COMMAND sh "${_here}/scenario_expect_fail.sh" "FAIL: over budget"
                ${emu} "${image}" -semihosting-config "arg=ctxc_scenario,arg=--stack-budget=64")
    add_test(NAME symbols_scenario_image
        COMMAND sh "${_here}/check_symbols.sh" "${nm}" "${image}")
    set_tests_properties(scenario_target scenario_target_vs_host
        scenario_target_selftest scenario_target_hardfault
        scenario_target_stack_selftest PROPERTIES
        LABELS "target;embedded" TIMEOUT 120)
    set_tests_properties(scenario_target PROPERTIES
        PASS_REGULAR_EXPRESSION "scenario: [0-9]+ checks, 0 failed"
        FAIL_REGULAR_EXPRESSION "FAIL|FAULT")
    set_tests_properties(symbols_scenario_image PROPERTIES LABELS "embedded")
endforeach()

# The static stack summary of the cross library (.ci files of the cortex-m4
# tree, see boards/mps2-an386/CMakeLists.txt) covers the entry points the
# image calls.
foreach(t IN LISTS CTXC_TARGETS)
    if(NOT MF_targets.${t}.board STREQUAL "boards/mps2-an386")
        continue()
    endif()
    add_test(NAME stack_static_${t}
        COMMAND python3 "${_here}/stack_static.py"
                "${_build_root}/${t}/src/CMakeFiles/${CTXC_PROJECT_NAME}.dir"
                ctxc_import_text ctxc_export ctxc_settings_load ctxc_settings_command
                ctxc_session_before_send ctxc_session_compress ctxc_session_optimize)
    set_tests_properties(stack_static_${t} PROPERTIES LABELS "embedded")
    # the board sets CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY=0: the cross
    # library holds none of the density step's indexed code
    ctxc_target_tool(${t} nm nm)
    add_test(NAME index_code_${t}
        COMMAND python3 "${_here}/check_index_code.py" "${nm}"
                "${_build_root}/${t}/src/lib${CTXC_PROJECT_NAME}.a")
    set_tests_properties(index_code_${t} PROPERTIES LABELS "embedded")
endforeach()

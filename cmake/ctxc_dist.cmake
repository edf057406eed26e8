# `make dist` / the `dist` target of the top-level build (script mode):
#
#   cmake -DCTXC_SOURCE_DIR=<repo> -DCTXC_GEN_DIR=<build>/gen
#         -DCTXC_VERSION=<v> -DCTXC_NAME=ctxc -DCTXC_OUT=<dir>
#         [-DCTXC_TARBALL=ON] -P cmake/ctxc_dist.cmake
#
# writes <dir>/<name>-<version>/, a source tree that builds with nothing but
# a C11 compiler (the generated manifest header and prompt table are in it),
# and with CTXC_TARBALL <dir>/<name>-<version>.tar.gz. Layout:
#
#   README.md            how to drop it into any build (cmake/dist/README.md.in)
#   LICENSE
#   CMakeLists.txt       an ESP-IDF component, or a plain CMake library
#                        (cmake/dist/CMakeLists.txt)
#   idf_component.yml    ESP-IDF component manifest (repo root)
#   library.json         PlatformIO library manifest (repo root)
#   zephyr/              Zephyr module: module.yml, Kconfig, CMakeLists.txt
#   include/ctxc/        the public headers + ctxc_manifest.h (generated)
#   config/ctxc_config.h the default configuration (every option commented)
#   src/                 every src/*.c and private header + ctxc_prompts.c
#                        (generated)
#   port/romfs/, port/template/   the portable ports
#   docs/                the repository's docs/ whole: the topic documents
#                        the headers point at (firmware-quickstart.md:
#                        configuration, port, flags, minimum calls, the
#                        job API, footprint; compression-job.md, ...)
#   examples/bare-metal/ a Cortex-M4 program: a config header, a log-only
#                        port, startup, linker script and a Makefile
#                        (cmake/dist/examples/bare-metal)
#   FILES                every file of the tree, one a line
#
# The sources are globbed: a file added to src/ is in the next dist.
foreach(v CTXC_SOURCE_DIR CTXC_GEN_DIR CTXC_VERSION CTXC_NAME CTXC_OUT)
    if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
        message(FATAL_ERROR " ctxc_dist.cmake: -D${v}=... is required")
    endif()
endforeach()
foreach(f ctxc_manifest.h ctxc_prompts.c)
    if(NOT EXISTS "${CTXC_GEN_DIR}/${f}")
        message(FATAL_ERROR " ctxc_dist.cmake: no ${CTXC_GEN_DIR}/${f} (configure the build first)")
    endif()
endforeach()

set(S "${CTXC_SOURCE_DIR}")
string(REGEX MATCH "^[0-9]+\\.[0-9]+\\.[0-9]+" CTXC_VERSION_NUMERIC "${CTXC_VERSION}")
set(base "${CTXC_NAME}-${CTXC_VERSION}")
set(D "${CTXC_OUT}/${base}")
file(REMOVE_RECURSE "${D}")
file(MAKE_DIRECTORY "${D}/include/ctxc" "${D}/src" "${D}/config" "${D}/zephyr")

file(GLOB _pub "${S}/include/ctxc/*.h")
file(COPY ${_pub} DESTINATION "${D}/include/ctxc")
file(GLOB _src "${S}/src/*.c" "${S}/src/*.h")
file(COPY ${_src} DESTINATION "${D}/src")
foreach(port romfs template)
    file(GLOB _p "${S}/port/${port}/*.c" "${S}/port/${port}/*.h")
    file(COPY ${_p} DESTINATION "${D}/port/${port}")
endforeach()
file(COPY "${CTXC_GEN_DIR}/ctxc_prompts.c" DESTINATION "${D}/src")
# the manifest header, named for no particular target
file(READ "${CTXC_GEN_DIR}/ctxc_manifest.h" _m)
string(REGEX REPLACE "#define CTXC_TARGET_NAME \"[^\"]*\"" "#define CTXC_TARGET_NAME \"dist\"" _m "${_m}")
file(WRITE "${D}/include/ctxc/ctxc_manifest.h" "${_m}")
file(COPY "${S}/LICENSE" DESTINATION "${D}")
file(COPY "${S}/docs" DESTINATION "${D}")
file(COPY "${S}/cmake/dist/examples/bare-metal" DESTINATION "${D}/examples")
file(COPY "${S}/cmake/dist/ctxc_config.h" DESTINATION "${D}/config")
file(COPY "${S}/zephyr/module.yml" "${S}/zephyr/Kconfig" "${S}/zephyr/CMakeLists.txt"
     DESTINATION "${D}/zephyr")
# files with the version of project.yml filled in (@CTXC_VERSION@)
configure_file("${S}/cmake/dist/CMakeLists.txt" "${D}/CMakeLists.txt" @ONLY)
configure_file("${S}/idf_component.yml" "${D}/idf_component.yml" @ONLY)
configure_file("${S}/library.json" "${D}/library.json" @ONLY)

# the README's file lists
file(GLOB _c RELATIVE "${D}" "${D}/src/*.c")
list(SORT _c)
list(LENGTH _c CTXC_DIST_SOURCE_COUNT)
string(REPLACE ";" " " CTXC_DIST_SOURCES "${_c}")
configure_file("${S}/cmake/dist/README.md.in" "${D}/README.md" @ONLY)

file(GLOB_RECURSE _all RELATIVE "${D}" "${D}/*")
list(APPEND _all FILES)
list(SORT _all)
string(REPLACE ";" "\n" _all "${_all}")
file(WRITE "${D}/FILES" "${_all}\n")

if(CTXC_TARBALL)
    execute_process(COMMAND "${CMAKE_COMMAND}" -E tar czf "${base}.tar.gz" "${base}"
                    WORKING_DIRECTORY "${CTXC_OUT}" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR " ctxc_dist.cmake: tar failed (${rc})")
    endif()
    message(STATUS "dist: ${D}/ (${CTXC_DIST_SOURCE_COUNT} sources) and ${CTXC_OUT}/${base}.tar.gz")
else()
    message(STATUS "dist: ${D}/ (${CTXC_DIST_SOURCE_COUNT} sources)")
endif()

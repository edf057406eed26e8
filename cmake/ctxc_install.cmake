# Install rules of the library (included by the root CMakeLists.txt when
# CTXC_INSTALL is ON). `cmake --install <build> --prefix <p>` writes:
#
#   <p>/include/ctxc/*.h                 the public headers
#   <p>/include/ctxc/ctxc_manifest.h     generated from project.yml
#   <p>/include/ctxc/ctxc_config.h       the configuration the library was
#                                        built with (CTXC_CONFIG_FILE, else
#                                        the board's), with the headers next
#                                        to it that it includes
#   <p>/lib/libctxc.a
#   <p>/lib/cmake/ctxc/ctxcConfig.cmake  find_package(ctxc) -> ctxc::ctxc
#   <p>/lib/cmake/ctxc/ctxcConfigVersion.cmake, ctxcTargets*.cmake
#   <p>/lib/pkgconfig/ctxc.pc            pkg-config --cflags --libs ctxc
#
# Every header lands in include/ctxc/ because ctxc_config_defaults.h includes
# "ctxc_manifest.h" and "ctxc_config.h" with quotes: the compiler looks next
# to the including header first, so a consumer needs only -I<p>/include and
# always sees the library's own configuration (the link-time guard of
# config_guard.h catches one that forces another through CTXC_CONFIG_FILE
# or -D flags). Both the CMake package and ctxc.pc are relocatable.
#
# The build tree itself is a package too, without installing (written at
# configure time, the library's path at generate time):
#
#   <build>/ctxcConfig.cmake, ctxcTargets.cmake   find_package(ctxc) with
#                                        -Dctxc_DIR=<build> or
#                                        CMAKE_PREFIX_PATH=<build>
#   <build>/ctxc-uninstalled.pc          PKG_CONFIG_PATH=<build>: pkg-config
#                                        prefers it to an installed ctxc.pc
#
# Both name the source tree's include/, the generated headers and the
# board folder (or CTXC_CONFIG_FILE), as the library was compiled with.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_name "${CTXC_PROJECT_NAME}")
set(_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/${_name}")

install(TARGETS ${_name} EXPORT ${_name}Targets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(DIRECTORY "${CTXC_ROOT_DIR}/include/ctxc"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")
install(FILES "${CTXC_GEN_DIR}/ctxc_manifest.h"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/ctxc")

# The configuration header the library was built with.
set(_cfg "")
if(CTXC_CONFIG_FILE_PATH)
    set(_cfg "${CTXC_CONFIG_FILE_PATH}")
elseif(CTXC_BOARD_DIR AND EXISTS "${CTXC_BOARD_DIR}/ctxc_config.h")
    set(_cfg "${CTXC_BOARD_DIR}/ctxc_config.h")
endif()
if(_cfg)
    install(FILES "${_cfg}" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/ctxc"
            RENAME ctxc_config.h)
    # the headers next to it that it includes with quotes (board_sizes.h of
    # boards/mps2-an386), two levels deep
    get_filename_component(_cfg_dir "${_cfg}" DIRECTORY)
    set(_todo "${_cfg}")
    set(_seen "")
    foreach(_level 1 2)
        set(_next "")
        foreach(_f IN LISTS _todo)
            file(STRINGS "${_f}" _incs REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"/]+\"")
            foreach(_i IN LISTS _incs)
                string(REGEX REPLACE "^[^\"]*\"([^\"]+)\".*$" "\\1" _i "${_i}")
                if(NOT _i STREQUAL "ctxc_config.h" AND NOT _i IN_LIST _seen
                   AND EXISTS "${_cfg_dir}/${_i}")
                    list(APPEND _seen "${_i}")
                    list(APPEND _next "${_cfg_dir}/${_i}")
                    install(FILES "${_cfg_dir}/${_i}"
                            DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/ctxc")
                endif()
            endforeach()
        endforeach()
        set(_todo "${_next}")
    endforeach()
endif()

install(EXPORT ${_name}Targets NAMESPACE ${_name}:: DESTINATION "${_cmake_dir}")
# the build tree's own targets file, next to the package config below
export(EXPORT ${_name}Targets NAMESPACE ${_name}::
       FILE "${CMAKE_CURRENT_BINARY_DIR}/${_name}Targets.cmake")
configure_package_config_file("${CTXC_ROOT_DIR}/cmake/ctxcConfig.cmake.in"
    "${CMAKE_CURRENT_BINARY_DIR}/${_name}Config.cmake"
    INSTALL_DESTINATION "${_cmake_dir}")
# 0.x: a minor version may change the API
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/${_name}ConfigVersion.cmake"
    VERSION "${CTXC_VERSION_NUMERIC}" COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/${_name}Config.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/${_name}ConfigVersion.cmake"
        DESTINATION "${_cmake_dir}")

file(RELATIVE_PATH CTXC_PC_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" CTXC_PC_PREFIX "${CTXC_PC_PREFIX}")
set(CTXC_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
set(CTXC_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
configure_file("${CTXC_ROOT_DIR}/cmake/ctxc.pc.in"
               "${CMAKE_CURRENT_BINARY_DIR}/${_name}.pc" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/${_name}.pc"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

# pkg-config of the build tree: `<name>-uninstalled.pc` is what pkg-config
# reads first for <name> in a directory of PKG_CONFIG_PATH. Absolute paths:
# it describes this tree where it is.
set(_uc "-I${CTXC_ROOT_DIR}/include -I${CTXC_GEN_DIR}")
if(CTXC_CONFIG_FILE_PATH)
    string(APPEND _uc " -DCTXC_CONFIG_FILE=\\\"${CTXC_CONFIG_FILE_PATH}\\\"")
elseif(CTXC_BOARD_DIR)
    string(APPEND _uc " -I${CTXC_BOARD_DIR}")
endif()
file(GENERATE OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/${_name}-uninstalled.pc"
     CONTENT "# pkg-config file of ctxc's build tree ${CMAKE_CURRENT_BINARY_DIR}
# (written by cmake/ctxc_install.cmake; PKG_CONFIG_PATH=<this folder>).
Name: ${_name}
Description: ctxc context compression core, build tree (target ${CTXC_TARGET_NAME}, board ${_board})
Version: ${CTXC_VERSION}
Cflags: ${_uc}
Libs: $<TARGET_FILE:${_name}>
")

# `cmake --install BUILD [--prefix P]` and `cpack -G DEB` (in BUILD): the binary, the
# standard packs, the preload library, man pages and bash completion, laid out so that the
# binary finds its data relative to itself (engine/session/pack_paths.h, instrument/hook/preload_path.h):
#   P/bin/causeway
#   P/share/causeway/rules/           the standard packs (stdlib-rules)
#   P/lib/causeway/libcauseway-preload.so
#   P/share/man/man1/causeway.1, P/share/man/man7/causeway-rules.7
#   P/share/bash-completion/completions/causeway
#   P/share/doc/causeway/: README.md, the docs (*.md), copyright (Debian's format)
include(GNUInstallDirs)
install(TARGETS causeway RUNTIME DESTINATION bin)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/stdlib-rules/ DESTINATION share/causeway/rules)
install(TARGETS causeway-preload LIBRARY DESTINATION lib/causeway)
install(FILES ${CMAKE_SOURCE_DIR}/docs/man/causeway.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/docs/man/causeway-rules.7 DESTINATION ${CMAKE_INSTALL_MANDIR}/man7)
file(GLOB cw_docs ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${cw_docs} ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${CMAKE_SOURCE_DIR}/cmake/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${CMAKE_SOURCE_DIR}/scripts/causeway-completion.bash
        DESTINATION share/bash-completion/completions RENAME causeway)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME causeway)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "find why a Linux application hung or was slow")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
       "causeway records what every thread does with eBPF, builds an event graph of "
       "execution segments joined by causal edges with rule packs, and walks it back from a "
       "hang to its root cause.")
set(CPACK_STRIP_FILES ON)  # the package without the build's debug information
set(CPACK_PACKAGE_CONTACT "causeway developers <causeway@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The runtime libraries (libbpf, capstone, lua, fmt...) from what the binary links.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "man-db, bash-completion")
include(CPack)

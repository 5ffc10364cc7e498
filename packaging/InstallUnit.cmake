# Install-time part of packaging/CMakeLists.txt: the unit and the settings
# file, with the paths of the prefix given to `cmake --install` (not the one
# the build was configured with), so that `cmake --install build --prefix
# /usr` (scripts/package) needs no reconfigure. Expects LOEHLE_SOURCE_DIR,
# LOEHLE_BINARY_DIR, LOEHLE_SBIN (relative sbin dir) and
# LOEHLE_UNITDIR_OVERRIDE (empty: by prefix) from the install(CODE) before.
#
# Paths by prefix, as Debian 12 keeps them:
#   /usr         /etc/default/scx_loehle, /lib/systemd/system
#   any other P  P/etc/default/scx_loehle, P/lib/systemd/system
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
	set(_sysconf "/etc")
	set(_unitdir "/lib/systemd/system")
else()
	set(_sysconf "${CMAKE_INSTALL_PREFIX}/etc")
	set(_unitdir "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
endif()
if(LOEHLE_UNITDIR_OVERRIDE)
	set(_unitdir "${LOEHLE_UNITDIR_OVERRIDE}")
endif()
set(LOEHLE_SBINDIR "${CMAKE_INSTALL_PREFIX}/${LOEHLE_SBIN}")
set(LOEHLE_DEFAULT_FILE "${_sysconf}/default/scx_loehle")
# One generated unit per DESTDIR and prefix: installs may run side by side
# (ctest runs install-layout beside the package builds).
string(MD5 _key "$ENV{DESTDIR}|${CMAKE_INSTALL_PREFIX}")
set(_unit "${LOEHLE_BINARY_DIR}/packaging/${_key}/scx_loehle.service")
configure_file("${LOEHLE_SOURCE_DIR}/packaging/scx_loehle.service.in" "${_unit}" @ONLY)
file(INSTALL "${_unit}" DESTINATION "${_unitdir}")
file(INSTALL "${LOEHLE_SOURCE_DIR}/packaging/scx_loehle.default"
	DESTINATION "${_sysconf}/default"
	RENAME scx_loehle)

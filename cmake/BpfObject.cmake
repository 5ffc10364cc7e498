# BpfObject.cmake: compile a BPF C program with clang and generate its libbpf
# skeleton, in the style of libbpf-bootstrap.
#
#   loehle_bpf_skeleton(<name> <src.bpf.c>)
#
# builds ${CMAKE_CURRENT_BINARY_DIR}/bpf/<name>.bpf.o with
#   ${BPF_CLANG} -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -g -O2 -Wall
#                -Wno-missing-declarations -Werror
#                -I${CMAKE_SOURCE_DIR}/include -I${CMAKE_SOURCE_DIR}/scx
#                -I<libbpf include dir>
# (-mcpu=v3: 32-bit atomics and jmp32, as upstream sched_ext schedulers use;
# every sched_ext kernel has it), recording a depfile, so editing any header
# it includes rebuilds it. Then `${BPFTOOL} gen skeleton <obj> name <name>_bpf`
# writes <name>.skel.h beside it, in the build folder only: struct <name>_bpf,
# <name>_bpf__open_and_load() and so on (the names bpftool derives from
# <name>.bpf.o by itself, as in libbpf-bootstrap). It creates the INTERFACE
# library <name>_skel: link it to get the skeleton's include dir, libbpf, and
# a build-order dependency on the generation.
#
# Inputs (cache variables; scripts/lib/toolchain.sh's loehle_cmake_args sets
# them from what scripts/setup installed):
#   BPF_CLANG        clang >= 16 (searched: clang-16 ... clang-20, clang)
#   BPFTOOL          bpftool >= 7.5 (searched: ${LOEHLE_DEPS}/bin, PATH, /usr/sbin)
#   BPF_EXTRA_CFLAGS extra flags for every BPF object (list)
# and LOEHLE_BPF_LIBBPF_INCLUDE_DIR / target loehle::libbpf from the caller.
include_guard(GLOBAL)

cmake_minimum_required(VERSION 3.20) # DEPFILE with the Makefile generators

set(LOEHLE_MIN_BPF_CLANG 16)
set(LOEHLE_MIN_BPFTOOL 7.5)

# --- clang for BPF ---------------------------------------------------------
find_program(BPF_CLANG NAMES clang-16 clang-17 clang-18 clang-19 clang-20 clang
	DOC "clang (>= ${LOEHLE_MIN_BPF_CLANG}) used to compile BPF programs")
if(NOT BPF_CLANG)
	message(FATAL_ERROR "BPF: no clang found; install clang-16 (scripts/setup) or pass -DBPF_CLANG=/path/to/clang-16")
endif()
execute_process(COMMAND "${BPF_CLANG}" --version OUTPUT_VARIABLE _bpf_clang_out
	ERROR_QUIET RESULT_VARIABLE _bpf_rc)
if(NOT _bpf_rc EQUAL 0 OR NOT _bpf_clang_out MATCHES "clang version ([0-9]+)\\.([0-9]+)")
	message(FATAL_ERROR "BPF: ${BPF_CLANG} does not run or does not report a clang version")
endif()
set(BPF_CLANG_VERSION "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
if(CMAKE_MATCH_1 LESS LOEHLE_MIN_BPF_CLANG)
	message(FATAL_ERROR "BPF: ${BPF_CLANG} is clang ${BPF_CLANG_VERSION}; sched_ext needs clang >= ${LOEHLE_MIN_BPF_CLANG} (install clang-16: scripts/setup, or pass -DBPF_CLANG=...)")
endif()
message(STATUS "BPF clang: ${BPF_CLANG} (${BPF_CLANG_VERSION})")

# --- bpftool -----------------------------------------------------------------
find_program(BPFTOOL NAMES bpftool
	HINTS "${LOEHLE_DEPS}/bin"
	PATHS /usr/sbin /sbin /usr/local/sbin
	DOC "bpftool (>= ${LOEHLE_MIN_BPFTOOL}) used to generate skeletons")
if(NOT BPFTOOL)
	message(FATAL_ERROR "BPF: no bpftool found; run scripts/setup or pass -DBPFTOOL=/path/to/bpftool")
endif()
execute_process(COMMAND "${BPFTOOL}" version OUTPUT_VARIABLE _bpftool_out
	ERROR_QUIET RESULT_VARIABLE _bpf_rc)
if(NOT _bpf_rc EQUAL 0 OR NOT _bpftool_out MATCHES "v([0-9]+\\.[0-9]+(\\.[0-9]+)?)")
	message(FATAL_ERROR "BPF: ${BPFTOOL} does not run or does not report a version")
endif()
set(BPFTOOL_VERSION "${CMAKE_MATCH_1}")
if(BPFTOOL_VERSION VERSION_LESS LOEHLE_MIN_BPFTOOL)
	message(FATAL_ERROR "BPF: ${BPFTOOL} is bpftool ${BPFTOOL_VERSION}; need >= ${LOEHLE_MIN_BPFTOOL} (older ones skip .struct_ops.link); run scripts/setup or pass -DBPFTOOL=...")
endif()
message(STATUS "BPF bpftool: ${BPFTOOL} (${BPFTOOL_VERSION})")

set(BPF_EXTRA_CFLAGS "" CACHE STRING "Extra flags for every BPF object (;-list)")

function(loehle_bpf_skeleton name src)
	if(NOT DEFINED LOEHLE_BPF_LIBBPF_INCLUDE_DIR)
		message(FATAL_ERROR "loehle_bpf_skeleton: set LOEHLE_BPF_LIBBPF_INCLUDE_DIR (the dir holding bpf/bpf_helpers.h) first")
	endif()
	get_filename_component(_src "${src}" ABSOLUTE)
	set(_dir "${CMAKE_CURRENT_BINARY_DIR}/bpf")
	set(_obj "${_dir}/${name}.bpf.o")
	set(_dep "${_dir}/${name}.bpf.d")
	set(_skel "${_dir}/${name}.skel.h")
	file(MAKE_DIRECTORY "${_dir}")

	add_custom_command(
		OUTPUT "${_obj}"
		COMMAND "${BPF_CLANG}" -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -g -O2
			-Wall -Wno-missing-declarations -Werror
			${BPF_EXTRA_CFLAGS}
			"-I${CMAKE_SOURCE_DIR}/include"
			"-I${CMAKE_SOURCE_DIR}/scx"
			"-I${LOEHLE_BPF_LIBBPF_INCLUDE_DIR}"
			-MD -MF "${_dep}" -MT "${_obj}"
			-c "${_src}" -o "${_obj}"
		MAIN_DEPENDENCY "${_src}"
		DEPFILE "${_dep}"
		COMMENT "BPF ${name}: compiling ${src}"
		VERBATIM COMMAND_EXPAND_LISTS)

	# Written to a temporary file first: a failed run leaves no empty header.
	add_custom_command(
		OUTPUT "${_skel}"
		COMMAND sh -c "\"$0\" gen skeleton \"$1\" name \"$2\" > \"$3.tmp\" && mv \"$3.tmp\" \"$3\""
			"${BPFTOOL}" "${_obj}" "${name}_bpf" "${_skel}"
		DEPENDS "${_obj}"
		COMMENT "BPF ${name}: generating ${name}.skel.h"
		VERBATIM)

	add_custom_target(${name}_skel_gen DEPENDS "${_skel}")
	add_library(${name}_skel INTERFACE)
	target_include_directories(${name}_skel INTERFACE "${_dir}")
	if(TARGET loehle::libbpf)
		target_link_libraries(${name}_skel INTERFACE loehle::libbpf)
	endif()
	# Followed transitively by every target that links ${name}_skel (CMake >= 3.19).
	add_dependencies(${name}_skel ${name}_skel_gen)
	set_target_properties(${name}_skel PROPERTIES
		LOEHLE_BPF_OBJECT "${_obj}" LOEHLE_BPF_SKELETON "${_skel}")
endfunction()

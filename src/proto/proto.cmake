# proto: hand-written primitives (src/proto/*.c) plus codecs that
# src/proto/gen.py generates from src/proto/schema/<Api>.schema into
# ${CMAKE_BINARY_DIR}/gen/proto/gen/ at build time (never committed).
#
# samsa_proto_gen runs the generator; samsa_proto depends on it, and every
# target linking samsa_proto (directly or not) builds after it, so the
# generated headers exist before anything that includes them compiles.

set(SAMSA_PROTO_DIR      ${CMAKE_SOURCE_DIR}/src/proto)
set(SAMSA_PROTO_GEN      ${SAMSA_PROTO_DIR}/gen.py)
set(SAMSA_PROTO_GEN_DIR  ${CMAKE_BINARY_DIR}/gen/proto/gen)

file(GLOB SAMSA_PROTO_SRC CONFIGURE_DEPENDS ${SAMSA_PROTO_DIR}/*.c)
file(GLOB SAMSA_PROTO_SCHEMAS CONFIGURE_DEPENDS
     ${SAMSA_PROTO_DIR}/schema/*.schema)

set(SAMSA_PROTO_GEN_OUT ${SAMSA_PROTO_GEN_DIR}/apis.c
                        ${SAMSA_PROTO_GEN_DIR}/apis.h)
foreach(schema ${SAMSA_PROTO_SCHEMAS})
  get_filename_component(api ${schema} NAME_WE)
  list(APPEND SAMSA_PROTO_GEN_OUT ${SAMSA_PROTO_GEN_DIR}/${api}.c
                                  ${SAMSA_PROTO_GEN_DIR}/${api}.h)
endforeach()

add_custom_command(
  OUTPUT  ${SAMSA_PROTO_GEN_OUT}
  COMMAND ${Python3_EXECUTABLE} ${SAMSA_PROTO_GEN}
          --out ${SAMSA_PROTO_GEN_DIR} ${SAMSA_PROTO_SCHEMAS}
  DEPENDS ${SAMSA_PROTO_GEN} ${SAMSA_PROTO_SCHEMAS}
  COMMENT "Generating protocol codecs from src/proto/schema"
  VERBATIM)

# Test-only schemas (tests/unit/proto/schema/): every type and attribute
# the generator supports, compiled into tests/unit/proto/test_gen.c.
set(SAMSA_PROTO_TESTGEN_DIR ${CMAKE_BINARY_DIR}/gen/proto/testgen)
file(GLOB SAMSA_PROTO_TEST_SCHEMAS CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/tests/unit/proto/schema/*.schema)
set(SAMSA_PROTO_TESTGEN_OUT)
foreach(schema ${SAMSA_PROTO_TEST_SCHEMAS})
  get_filename_component(api ${schema} NAME_WE)
  list(APPEND SAMSA_PROTO_TESTGEN_OUT ${SAMSA_PROTO_TESTGEN_DIR}/${api}.c
                                      ${SAMSA_PROTO_TESTGEN_DIR}/${api}.h)
endforeach()
if(SAMSA_PROTO_TEST_SCHEMAS)
  add_custom_command(
    OUTPUT  ${SAMSA_PROTO_TESTGEN_OUT}
    COMMAND ${Python3_EXECUTABLE} ${SAMSA_PROTO_GEN}
            --out ${SAMSA_PROTO_TESTGEN_DIR} --prefix proto/testgen --no-table
            ${SAMSA_PROTO_TEST_SCHEMAS}
    DEPENDS ${SAMSA_PROTO_GEN} ${SAMSA_PROTO_TEST_SCHEMAS}
    COMMENT "Generating test codecs from tests/unit/proto/schema"
    VERBATIM)
endif()

add_custom_target(samsa_proto_gen
  DEPENDS ${SAMSA_PROTO_GEN_OUT} ${SAMSA_PROTO_TESTGEN_OUT})

add_library(samsa_proto STATIC ${SAMSA_PROTO_SRC}
            ${SAMSA_PROTO_GEN_OUT})
add_dependencies(samsa_proto samsa_proto_gen)
target_link_libraries(samsa_proto PUBLIC samsa_util)

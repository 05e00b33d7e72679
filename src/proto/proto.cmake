# proto: hand-written primitives plus codecs generated from src/proto/schema/.
file(GLOB SAMSA_PROTO_SRC CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/proto/*.c)
add_library(samsa_proto STATIC ${SAMSA_PROTO_SRC})
target_link_libraries(samsa_proto PUBLIC samsa_util)

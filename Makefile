# Samsa - the two commands of the README:
#   make run    install missing dependencies, build, start a single-node
#               samsa-server on the embedded default configuration
#   make test   the same set-up, then every test through ctest
# Options: SANITIZE=address (ASan+UBSan) or SANITIZE=thread (TSan), each in
# its own build directory; ARGS="..." for samsa-server; CTEST_ARGS="-L unit".

SANITIZE   ?=
BUILD      ?= build$(if $(SANITIZE),-$(SANITIZE))
BUILD_TYPE ?= $(if $(SANITIZE),Debug,RelWithDebInfo)
JOBS       ?= $(shell nproc)
CTEST_ARGS ?=
ARGS       ?=

.PHONY: all deps build run test fuzz clean fmt-check

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	    -DSAMSA_SANITIZE=$(SANITIZE) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS) -- --no-print-directory

run: build
	./$(BUILD)/samsa-server $(ARGS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) $(CTEST_ARGS)

fmt-check:
	@git ls-files '*.c' '*.h' | xargs clang-format --dry-run --Werror

clean:
	rm -rf build build-address build-thread build-fuzz

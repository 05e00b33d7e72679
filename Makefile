# Samsa - the two commands of the README:
#   make run    install missing dependencies, build, start a single-node
#               samsa-server on the embedded default configuration
#   make test   the same set-up, then every test through ctest
#   make install  build, then install under PREFIX (and DESTDIR)
# Options: SANITIZE=address (ASan+UBSan) or SANITIZE=thread (TSan), each in
# its own build directory; ARGS="..." for samsa-server; CTEST_ARGS="-L unit";
# WERROR=OFF to build past compiler warnings (on by default, and in CI).

SANITIZE   ?=
BUILD      ?= build$(if $(SANITIZE),-$(SANITIZE))
BUILD_TYPE ?= $(if $(SANITIZE),Debug,RelWithDebInfo)
JOBS       ?= $(shell nproc)
CTEST_ARGS ?=
ARGS       ?=
WERROR     ?= ON

.PHONY: all deps build run test install fuzz clean fmt-check build-matrix

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	    -DSAMSA_SANITIZE=$(SANITIZE) -DSAMSA_WERROR=$(WERROR) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS) -- --no-print-directory

run: build
	./$(BUILD)/samsa-server $(ARGS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) $(CTEST_ARGS)

# install: samsa-server, samsa, libsamsa (.so, .a, headers, libsamsa.pc),
# etc/samsa/server.properties, the systemd unit and bash completion under
# PREFIX (default /usr/local), staged under DESTDIR when set.
PREFIX ?= /usr/local

install: build
	@DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)

fmt-check:
	@git ls-files '*.c' '*.h' | xargs clang-format --dry-run --Werror

# fuzz: build the libFuzzer targets (tests/fuzz/fuzz_*.c) with clang in
# build-fuzz and run each for FUZZ_SECONDS, JOBS at a time, seeded from
# tests/fuzz/corpus/<target>/ (scripts/fuzz.sh: new inputs, logs and
# crashing inputs stay in build-fuzz/); the generated request codecs
# (fuzz_*Request) run FUZZ_CODEC_SECONDS each.
FUZZ_SECONDS ?= 30
FUZZ_CODEC_SECONDS ?= $(FUZZ_SECONDS)
FUZZ_BUILD   ?= build-fuzz

fuzz: deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DSAMSA_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) --target samsa_fuzz -j$(JOBS) -- \
	    --no-print-directory
	@scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(JOBS) $(FUZZ_CODEC_SECONDS)

# build-matrix: compile clean with gcc and clang in Release (CI), or with
# MATRIX_CC / MATRIX_TYPES set, e.g. MATRIX_TYPES="Debug Release MinSizeRel".
MATRIX_CC    ?= gcc clang
MATRIX_TYPES ?= Release

build-matrix: deps
	@scripts/build-matrix.sh "$(MATRIX_CC)" "$(MATRIX_TYPES)"

clean:
	rm -rf build build-address build-thread build-fuzz build-matrix

# SPDX-License-Identifier: Apache-2.0
# kt - Kubeflow Trainer v2 control plane in C. One non-recursive Makefile (docs/internals/style.md#one-makefile).
#
#   make            build bin/kt-webhook bin/kt-reconciler bin/ktctl and libkt.a (build/plain)
#   make unit       the tiers with no cluster, apt or Go: unit tests, then every tests/*/tier.sh
#                   (admission build certs cluster dist golden install parity plugins validate)
#   make check      unit plain and under ASan+UBSan, then lint: the check before a commit
#   make test       everything: deps, WERROR build, tiers plain + ASan/UBSan, TSan, lint, CI formats,
#                   pre-commit, docs, integration, parity, reliability, helm, image, e2e, node, fuzz
#   make lint       C and shell lint (tests/lint.sh); make format applies .clang-format
#   make itests     the C integration tests (tests/integration/run.sh runs them on a cluster)
#   make deps       the Debian packages kt uses, when missing; make cluster: the cluster's binaries
#   make compat     the API-server tiers against each supported Kubernetes (COMPAT_VERSIONS)
#   make bench      benchmarks; make scale: N TrainJobs, kt beside upstream (N, SIDES);
#                   make scale-gate: the calibrated scale gate of make test alone
#   make fuzz       each libFuzzer target (FUZZ_SECONDS); make analyze: gcc -fanalyzer build
#   make run        the local demo (see README)
#   make image      build/image/kt.oci.tar, an OCI image from Debian packages (mmdebstrap, umoci)
#   make man        build/man/*.1 *.8, man pages written by help2man from each binary's --help
#   make precommit  the pre-commit hooks with the real pre-commit, ktctl built in pre-commit's cache
#   make install    the binaries, man pages, manifests and docs under PREFIX (/usr/local); DESTDIR;
#                   make uninstall removes them
#   make release    build/release/VERSION/: source and binary tarballs, .deb, image, SBOM, chart,
#                   SHA256SUMS; make dist, bindist, deb: one of them; make release-test checks them
#   make print-version, make clean, make links (bin/ -> build/plain/bin)
#   SANITIZER=address,undefined|thread  VALGRIND=1  WERROR=1  V=1  TESTS=test_buf
#   T=PATTERN (make unit: only the tests whose TIER/NAME matches; tests/run TIER PATTERN for any tier)
#   (a change of flags recompiles: $(B)/.build-flags)

comma := ,
# kt's release: common/base/version.h is the one source (docs/releasing.md).
VERSION := $(shell sed -n 's/^\#define KT_RELEASE "\(.*\)"$$/\1/p' common/base/version.h)
CC ?= cc
SANITIZER ?=
WERROR ?=
PKGS := libmicrohttpd gnutls hogweed nettle libcurl jansson yaml-0.1

ifeq ($(SANITIZER),)
  VARIANT := plain
  OPT := -O2 -g
  SANFLAGS :=
else
  VARIANT := $(subst $(comma),-,$(SANITIZER))
  OPT := -O1 -g -fno-omit-frame-pointer
  SANFLAGS := -fsanitize=$(SANITIZER) -fno-sanitize-recover=all
endif

B := build/$(VARIANT)
WARN := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wold-style-definition -Wpointer-arith -Wcast-qual -Wwrite-strings -Wformat=2 -Wundef \
        -Wvla -Wimplicit-fallthrough -Wconversion -Wno-sign-conversion
ifneq ($(WERROR),)
  WARN += -Werror
endif
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS_ALL := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(OPT) $(WARN) $(SANFLAGS) \
              -I. -MMD -MP $(PKG_CFLAGS) $(CFLAGS)
LDFLAGS_ALL := $(SANFLAGS) $(LDFLAGS)
# SARIF rules' helpUri (cli/report.c, docs/ktctl.md "SARIF rules"): that page on KT_SOURCE_URL.
$(B)/cli/report.o: CFLAGS_ALL += $(if $(KT_SOURCE_URL),-DKT_SOURCE_URL='"$(KT_SOURCE_URL)"')
LIBS := $(PKG_LIBS) -lpthread -ldl -lm

# Objects remember the flags they were built with (as git's GIT-CFLAGS and redis's .make-settings
# do): every object and binary of $(B) depends on $(B)/.build-flags, which is rewritten whenever
# the compiler, CFLAGS (WERROR, SANITIZER, CFLAGS=...), LDFLAGS, the libraries or KT_SOURCE_URL differ from the
# last build there, so `make WERROR=1` after a plain `make` compiles everything again
# (tests/build/tier.sh checks it).
FLAGS_FILE := $(B)/.build-flags
BUILD_FLAGS := $(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) $(LIBS) KT_SOURCE_URL=$(KT_SOURCE_URL)
ifneq ($(file <$(FLAGS_FILE)),$(BUILD_FLAGS))
  $(shell mkdir -p $(B))
  $(file >$(FLAGS_FILE),$(BUILD_FLAGS))
endif

ifeq ($(V),)
  Q := @
  say = @printf '  %-6s %s\n' $(1) $(2);
else
  Q :=
  say =
endif

LIB_SRCS := $(sort $(wildcard common/*/*.c api/*.c certs/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/%.o)
LIB := $(B)/libkt.a

BIN_NAMES := $(if $(wildcard webhook/*.c),kt-webhook) $(if $(wildcard reconciler/*.c),kt-reconciler) \
             $(if $(wildcard cli/*.c),ktctl)
BINS := $(BIN_NAMES:%=$(B)/bin/%)
srcs_of = $(sort $(wildcard $(1)/*.c))
webhook_objs := $(patsubst %.c,$(B)/%.o,$(call srcs_of,webhook))
reconciler_objs := $(patsubst %.c,$(B)/%.o,$(call srcs_of,reconciler))
cli_objs := $(patsubst %.c,$(B)/%.o,$(call srcs_of,cli))

UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
ifneq ($(TESTS),)
  UNIT_SRCS := $(filter $(addprefix tests/unit/,$(addsuffix .c,$(TESTS))),$(UNIT_SRCS))
endif
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)
# make unit T='PATTERN...': only the tests whose TIER/NAME matches (tests/lib.sh kt_only); TESTS=test_x
# alone means T=unit/test_x, so the shell tiers' cases do not run either.
T ?= $(addprefix unit/,$(TESTS))
TOOL_SRCS := $(sort $(wildcard tests/tools/*.c))
ITEST_SRCS := $(sort $(wildcard tests/integration/itest_*.c))
ITEST_BINS := $(ITEST_SRCS:tests/integration/%.c=$(B)/itests/%)
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=$(B)/tools/%)

DEPS := $(LIB_OBJS:.o=.d) $(webhook_objs:.o=.d) $(reconciler_objs:.o=.d) $(cli_objs:.o=.d) \
        $(UNIT_BINS:=.d) $(TOOL_BINS:=.d) $(ITEST_BINS:=.d)

.PHONY: print-version all deps unit check test run cluster bench scale scale-gate fuzz lint format analyze dist image man clean links itests precommit install uninstall bindist deb release release-test compat
all: $(LIB) $(BINS) links

# bin/ always points at the plain build so README commands stay short.
links: $(BINS)
ifeq ($(VARIANT),plain)
	$(Q)mkdir -p bin
	$(Q)for b in $(BIN_NAMES); do ln -sf ../$(B)/bin/$$b bin/$$b; done
	$(Q)if [ -e $(B)/bin/ktctl ]; then ln -sf ../$(B)/bin/ktctl bin/kubectl-kt; fi
endif

$(B)/%.o: %.c $(FLAGS_FILE)
	$(call say,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

$(LIB): $(LIB_OBJS) $(FLAGS_FILE)
	$(call say,AR,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $(filter %.o,$^)

$(B)/bin/kt-webhook: $(webhook_objs) $(LIB) $(FLAGS_FILE)
$(B)/bin/kt-reconciler: $(reconciler_objs) $(LIB) $(FLAGS_FILE)
$(B)/bin/ktctl: $(cli_objs) $(LIB) $(FLAGS_FILE)
$(BINS):
	$(call say,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $(filter-out $(FLAGS_FILE),$^) $(LIBS)

$(B)/tests/%: tests/unit/%.c $(LIB) $(FLAGS_FILE)
	$(call say,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_ALL) -MF $@.d -o $@ $< $(LIB) $(LDFLAGS_ALL) $(LIBS)

$(B)/tools/%: tests/tools/%.c $(LIB) $(FLAGS_FILE)
	$(call say,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_ALL) -MF $@.d -o $@ $< $(LIB) $(LDFLAGS_ALL) $(LIBS)

$(B)/itests/%: tests/integration/%.c $(LIB) $(FLAGS_FILE)
	$(call say,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_ALL) -MF $@.d -o $@ $< $(LIB) $(LDFLAGS_ALL) $(LIBS)

# C integration tests (tests/integration/itest_*.c); tests/integration/run.sh runs them.
itests: $(ITEST_BINS) $(TOOL_BINS) $(BINS) links

deps:
	$(Q)scripts/deps.sh

# The inner loop: every tier that needs no cluster. tests/tiers.sh prints N passed, N failed.
unit: $(UNIT_BINS) $(TOOL_BINS) $(BINS) links
	$(Q)VALGRIND=$(VALGRIND) KT_ONLY="$(T)" tests/tiers.sh $(B) $(UNIT_BINS)

# Between unit and test: the no-cluster tiers plain and under ASan+UBSan, then lint; no cluster,
# no apt, no Go. Stops at the first step that fails.
check:
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory SANITIZER=address,undefined unit
	$(Q)$(MAKE) --no-print-directory lint

test: deps
	$(Q)tests/test-all.sh

cluster:
	$(Q)scripts/cluster/build.sh --full

# make compat COMPAT_VERSIONS="1.34.4 1.37.2": the API-server-dependent tiers against each
# supported Kubernetes release (tests/compat/run.sh; not part of make test).
compat: all
	$(Q)COMPAT_VERSIONS="$(COMPAT_VERSIONS)" tests/compat/run.sh

run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo/run.sh

bench: all
	$(Q)tests/bench/run.sh $(B)

# make scale N="100 300" SIDES=kt,upstream: the full chain at N TrainJobs, kt and upstream side by
# side (tests/bench/scale.sh; figures, a growth chart in build/scale/, correctness checked).
# SCALE_CHAIN=sim: the same on the simulated chain (API server + KWOK JobSet Stages only);
# SCALE_SIM_ENGINE=jobsim plays the JobSet steps with tests/cluster/jobset_sim.py (10,000 and more).
scale: all
	$(Q)N="$(N)" SIDES="$(SIDES)" SCALE_CHAIN="$(SCALE_CHAIN)" SCALE_SIM_ENGINE="$(SCALE_SIM_ENGINE)" tests/bench/scale.sh $(B)

# make scale-gate: the scale gate of make test alone (tests/bench/gate.sh: one kt run on the
# simulated chain against the limits in tests/bench/gate/limits.json).
scale-gate: all
	$(Q)tests/bench/gate.sh $(B)

# The hook ktctl-validate as a user meets it: the real pre-commit (PyPI) on a scratch repository,
# no ktctl on PATH, ktctl built from source in pre-commit's cache (about a minute; make test runs
# the cheap part: the same commits through ktctl-validate-system, the build's failures).
precommit:
	$(Q)tests/validate/precommit.sh --from-source

FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
fuzz:
	$(Q)tests/fuzz/run.sh $(FUZZ_SRCS:tests/fuzz/%.c=%)

FMT_SRCS = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
lint:
	$(Q)tests/lint.sh

format:
	$(Q)clang-format -i $(FMT_SRCS)

analyze:
	$(Q)$(MAKE) --no-print-directory B=build/analyze CFLAGS=-fanalyzer WERROR=1 build/analyze/libkt.a

# The release (docs/install.md "From a release"; deploy/release/): every artefact in
# build/release/$(VERSION)/ (RELEASE_DIR), each name carrying the version. `make release` makes
# all of them and SHA256SUMS; dist, bindist and deb one each. The binaries of bindist, deb and the
# release's image are built with Debian's hardening flags in build/release-obj.
RELEASE_DIR ?= build/release/$(VERSION)
release:
	$(Q)deploy/release/release.sh $(RELEASE_DIR)

# kt-VERSION.tar.gz: the source of HEAD (git archive), reproducible.
dist:
	$(Q)deploy/release/dist.sh $(RELEASE_DIR)

# kt-VERSION-linux-amd64.tar.gz: binaries, man pages, manifests, LICENSE/NOTICE, README.binary.
bindist:
	$(Q)deploy/release/release.sh $(RELEASE_DIR) bindist

# kt_VERSION-1_amd64.deb: dpkg-shlibdeps, dpkg-gencontrol, dpkg-deb, lintian.
deb:
	$(Q)deploy/release/release.sh $(RELEASE_DIR) deb

# tests/release/run.sh: make release into a temp folder, check every artefact, install the .deb
# into a clean Debian root (mmdebstrap) and run it there. Needs root and a Debian mirror.
release-test:
	$(Q)tests/release/run.sh

# build/man: help2man turns each binary's own --help and --version into its page
# (docs/man/build.sh; docs/man/*.h2m add ENVIRONMENT, FILES, SEE ALSO), so a page cannot
# disagree with its binary. kt-webhook.8 and kt-reconciler.8 are in section 8, system
# administration commands, because they are daemons a Deployment or service manager starts;
# ktctl.1 and ktctl-SUBCOMMAND.1 in section 1, user commands, because people run ktctl.
# Build output, never committed; `man -l build/man/ktctl.1` reads one. tests/docs/run.sh checks them.
man: all
	$(Q)docs/man/build.sh $(B)/bin build/man

# build/image/kt.oci.tar: an OCI image archive built from Debian packages (mmdebstrap, umoci),
# no registry base image (docs/install.md "The image"); tests/image/run.sh checks it.
image: all
	$(Q)deploy/image/build.sh $(B) build/image/kt.oci.tar

# make install / make uninstall (GNU conventions; deploy/release/install.sh, docs/install.md
# "From source"): the plain build's binaries and kubectl-kt, the man pages, the CRDs and
# manifests under DATADIR/kt, LICENSE, NOTICE and the docs under DOCDIR. DESTDIR stages the
# install elsewhere; uninstall removes exactly what install listed in DATADIR/kt/installed-files.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/kt
INSTALL_VARS = PREFIX="$(PREFIX)" BINDIR="$(BINDIR)" DATADIR="$(DATADIR)" MANDIR="$(MANDIR)" \
               DOCDIR="$(DOCDIR)" DESTDIR="$(DESTDIR)"
install: all
	$(Q)$(INSTALL_VARS) deploy/release/install.sh install $(B)

uninstall:
	$(Q)$(INSTALL_VARS) deploy/release/install.sh uninstall

clean:
	rm -rf build bin

-include $(DEPS)

print-version:
	@echo $(VERSION)

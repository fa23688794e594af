# ascope build. `make` builds build/ascope (one self-contained executable) and
# build/ascope_core.so (the same primitives for a stock lua5.4).
CC      ?= gcc
LUA     ?= lua5.4
PREFIX  ?= /usr/local
BUILD   ?= build
LUAINC  ?= /usr/include/lua5.4
# the static libraries of Debian's packages live in /usr/lib/<multiarch triplet>
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
LIBDIR  ?= $(if $(MULTIARCH),/usr/lib/$(MULTIARCH),/usr/lib)
VERSION := $(shell sed -n 's/^return "\(.*\)"$$/\1/p' lua/ascope/version.lua)
WARN    := -Wall -Wextra -Werror -Wno-unused-parameter
CFLAGS  ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -fPIC -Iinclude -I$(LUAINC) $(CFLAGS) $(EXTRA_CFLAGS)

PRIM_SRCS := src/error.c src/strtab.c src/lpat.c src/logclass.c src/column.c src/decimal.c src/json_scan.c src/json_par.c src/json_escape.c src/json_unescape.c \
             src/csv_read.c src/csv_write.c src/interval.c src/match.c src/stab.c src/bin.c src/db.c \
             src/fs.c src/spool.c src/par.c src/regex.c src/iconv.c src/stacktree.c src/stacktop.c src/stackjoin.c src/topgroups.c \
             src/label.c src/taskpath.c src/idmap.c src/hash.c
BIND_SRCS := src/lcolumn.c src/ljson.c src/ljson_writer.c src/lcsv.c src/linterval.c src/lmatch.c src/lbin.c \
             src/ldb.c src/lfs.c src/lpar.c src/lregex.c src/liconv.c src/llogclass.c src/lstacktree.c src/lerror.c src/core.c
LUA_FILES := $(shell find lua -name '*.lua' | sort) $(shell find rules -name '*.lua' | sort)

PRIM_OBJS := $(PRIM_SRCS:src/%.c=$(BUILD)/obj/%.o)
BIND_OBJS := $(BIND_SRCS:src/%.c=$(BUILD)/obj/%.o)
HOST_OBJS := $(BUILD)/obj/main.o $(BUILD)/obj/embedded.o
STATIC_LIBS := $(LIBDIR)/liblua5.4.a $(LIBDIR)/liblua5.4-lpeg.a $(LIBDIR)/libyajl_s.a \
               $(LIBDIR)/libcsv.a $(LIBDIR)/libsqlite3.a
SHARED_LIBS := $(SO_LDFLAGS) -lyajl -lcsv -lsqlite3 -lpthread
# where `make install` puts things (the rockspec's build passes LuaRocks' folders instead)
INST_BINDIR ?= $(PREFIX)/bin
INST_LIBDIR ?= $(PREFIX)/lib/lua/5.4
INST_LUADIR ?= $(PREFIX)/share/lua/5.4
INST_MANDIR ?= $(PREFIX)/share/man/man1
INST_COMPDIR ?= $(PREFIX)/share/bash-completion/completions
INST_TYPESDIR ?= $(PREFIX)/share/ascope/types
# the Lua modules of the source tree and the ascope executable's generators
SRC_LUA := LUA_PATH='lua/?.lua;lua/?/init.lua' LUA_CPATH='$(BUILD)/?.so'

all: binaries $(BUILD)/ascope.1 $(BUILD)/ascope.bash
binaries: $(BUILD)/ascope $(BUILD)/ascope_core.so

$(BUILD)/obj/%.o: src/%.c $(wildcard include/ascope/*.h) src/lbind.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/embedded.c: src/embed.lua $(LUA_FILES)
	@mkdir -p $(BUILD)
	$(LUA) src/embed.lua $@ $(LUA_FILES)

$(BUILD)/obj/embedded.o: $(BUILD)/embedded.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O0 -c $< -o $@

# -Wl,-E exports the Lua API so C modules loaded by scripts (busted's helpers) link against
# the interpreter inside the executable.
$(BUILD)/ascope: $(HOST_OBJS) $(BIND_OBJS) $(PRIM_OBJS)
	$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -Wl,-E -o $@ $^ $(STATIC_LIBS) -lm -ldl -lpthread

$(BUILD)/ascope_core.so: $(BIND_OBJS) $(PRIM_OBJS)
	$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -shared -o $@ $^ $(SHARED_LIBS) -lm

# The man page and the bash completion are written from the commands' option specs, so they
# say what `ascope help` says.
$(BUILD)/ascope.1: $(BUILD)/ascope_core.so $(LUA_FILES)
	$(SRC_LUA) $(LUA) -e 'io.write(require("ascope.manpage").render())' > $@.tmp && mv $@.tmp $@

$(BUILD)/ascope.bash: $(BUILD)/ascope_core.so $(LUA_FILES)
	$(SRC_LUA) $(LUA) -e 'io.write(require("ascope.completion").bash())' > $@.tmp && mv $@.tmp $@

# C unit tests of the primitives (no Lua)
C_TESTS := $(patsubst spec/c/%.c,$(BUILD)/ctest/%,$(wildcard spec/c/test_*.c))
$(BUILD)/ctest/%: spec/c/%.c spec/c/ctest.h $(PRIM_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(PRIM_OBJS) $(STATIC_LIBS) -lm -ldl -lpthread

# The open spy of the diagnose spec (spec/diagnose_spy_spec.lua): an LD_PRELOAD shim that logs every
# file the process opens. Built without $(CFLAGS), so no sanitizer runtime of its own.
$(BUILD)/openspy.so: spec/c/openspy.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -shared -fPIC -o $@ $< -ldl

ctests: $(C_TESTS) $(BUILD)/openspy.so

test: all ctests
	@ASCOPE_BUILD=$(BUILD) sh spec/run.sh

# The same suite built with AddressSanitizer and UBSan (separate build folder).
sanitize:
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined" binaries ctests
	ASAN_OPTIONS=detect_leaks=1 ASCOPE_BUILD=build-asan ASCOPE_RUNNER=host sh spec/run.sh

# The suite on a build without the vector paths (include/ascope/simd.h): the byte loops must
# give what the SSE2 and AVX2 loops give, on every spec.
portable:
	$(MAKE) BUILD=build-portable EXTRA_CFLAGS=-DASC_PORTABLE_SCAN binaries ctests
	ASCOPE_BUILD=build-portable sh spec/run.sh

# The primitives' specs under valgrind (leaks and invalid accesses are errors).
valgrind: all ctests
	ASCOPE_BUILD=$(BUILD) ASCOPE_RUNNER=valgrind sh spec/run.sh spec/primitives

$(BUILD)/bench/%: spec/bench/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -o $@ $< $(LIBDIR)/libyajl_s.a $(LIBDIR)/libcsv.a

# The HTML reports opened in headless Chromium (Debian package chromium): not blank, no
# console error.
check-html: all
	ASCOPE_BIN=$(BUILD)/ascope $(BUILD)/ascope run spec/check_html.lua

# The README's pictures of the memory, timeline, opjitter and moe reports (docs/screenshots/),
# taken by headless Chromium; run it after changing a report and commit the PNGs.
screenshots: all
	ASCOPE_BIN=$(BUILD)/ascope $(BUILD)/ascope run spec/screenshots.lua docs/screenshots

# A one-node Slurm cluster (munged, slurmctld, slurmd started as root in a temporary folder) runs
# examples/slurm over a generated tree; the merged outputs must be the single run's, byte for
# byte. Needs the Debian packages slurmctld slurmd slurm-client munge (.ci/run installs them).
slurm-check: all
	ASCOPE_BUILD=$(BUILD) sh spec/slurm_check.sh

bench: all $(BUILD)/bench/skim $(BUILD)/bench/noop_yajl $(BUILD)/bench/noop_csv $(BUILD)/bench/measure
	$(BUILD)/ascope run spec/bench/run.lua --build $(BUILD) $(BENCH_ARGS)

# libFuzzer harnesses (spec/fuzz/fuzz_*.c) built with clang, ASan and UBSan, each run for
# FUZZ_SECONDS from a corpus seeded with spec/fixtures (files cut to FUZZ_MAX_LEN bytes). A crash
# leaves its input as build-fuzz/crash-* and fails the target.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 25
FUZZ_MAX_LEN ?= 16384
FUZZ_BUILD   := build-fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_NAMES   := $(patsubst spec/fuzz/fuzz_%.c,%,$(wildcard spec/fuzz/fuzz_*.c))
FUZZ_OBJS    := $(patsubst src/%.c,$(FUZZ_BUILD)/obj/%.o,$(PRIM_SRCS) $(BIND_SRCS))
.SECONDARY: $(FUZZ_OBJS)

$(FUZZ_BUILD)/obj/%.o: src/%.c $(wildcard include/ascope/*.h) src/lbind.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -Iinclude -I$(LUAINC) -g -O1 -fsanitize=fuzzer-no-link $(FUZZ_SAN) -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: spec/fuzz/fuzz_%.c spec/fuzz/fuzz_common.h $(FUZZ_OBJS)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE $(WARN) -Iinclude -Isrc -I$(LUAINC) -g -O1 -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $< \
	  $(FUZZ_OBJS) $(STATIC_LIBS) -lm -ldl -lpthread

fuzz: $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz_%)
	@rm -f $(FUZZ_BUILD)/crash-* $(FUZZ_BUILD)/leak-* $(FUZZ_BUILD)/timeout-* $(FUZZ_BUILD)/oom-*
	@set -e; for n in $(FUZZ_NAMES); do \
	  c=$(FUZZ_BUILD)/corpus/$$n; mkdir -p $$c; \
	  case $$n in json*) ext=json;; csv) ext=csv;; logclass*) ext=log;; *) ext='*';; esac; \
	  find spec/fixtures -type f -name "*.$$ext" | while read -r f; do \
	    head -c $(FUZZ_MAX_LEN) "$$f" > "$$c/seed-$$(printf '%s' "$$f" | cksum | cut -d' ' -f1)"; done; \
	  echo "fuzz_$$n: $(FUZZ_SECONDS) s"; \
	  dict=; case $$n in json*) dict=-dict=spec/fuzz/json.dict;; esac; \
	  $(FUZZ_BUILD)/fuzz_$$n $$dict -max_total_time=$(FUZZ_SECONDS) -max_len=$(FUZZ_MAX_LEN) -timeout=10 \
	    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/ $$c 2>&1 | \
	    grep -E '^(stat::number_of_executed_units|stat::new_units_added|==[0-9]+==ERROR|SUMMARY|json.scan|fs.grep)' ; \
	  if ls $(FUZZ_BUILD)/crash-* $(FUZZ_BUILD)/leak-* $(FUZZ_BUILD)/timeout-* $(FUZZ_BUILD)/oom-* 2>/dev/null; then \
	    echo "fuzz_$$n found a failing input (above)"; exit 1; fi; \
	done

lint:
	luacheck lua rules spec examples types
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --std=c11 -Iinclude src
	clang-format --dry-run --Werror src/*.c src/*.h include/ascope/*.h spec/fuzz/*.c spec/fuzz/*.h spec/c/openspy.c

# The module for a stock lua5.4, the Lua modules and the rules beside them (LUADIR/ascope/rules/,
# where ascope.rules looks once installed).
install-lua: $(BUILD)/ascope_core.so
	install -d $(DESTDIR)$(INST_LIBDIR) $(DESTDIR)$(INST_LUADIR)/ascope/rules
	install -m 755 $(BUILD)/ascope_core.so $(DESTDIR)$(INST_LIBDIR)/ascope_core.so
	cd lua && find ascope -name '*.lua' -exec install -D -m 644 {} $(DESTDIR)$(INST_LUADIR)/{} \;
	install -m 644 rules/*.lua $(DESTDIR)$(INST_LUADIR)/ascope/rules/

install: all install-lua
	install -d $(DESTDIR)$(INST_BINDIR) $(DESTDIR)$(INST_MANDIR) $(DESTDIR)$(INST_COMPDIR) $(DESTDIR)$(INST_TYPESDIR)
	install -m 755 $(BUILD)/ascope $(DESTDIR)$(INST_BINDIR)/ascope
	install -m 644 $(BUILD)/ascope.1 $(DESTDIR)$(INST_MANDIR)/ascope.1
	install -m 644 $(BUILD)/ascope.bash $(DESTDIR)$(INST_COMPDIR)/ascope
	install -m 644 types/*.lua $(DESTDIR)$(INST_TYPESDIR)/

uninstall:
	rm -f $(DESTDIR)$(INST_BINDIR)/ascope $(DESTDIR)$(INST_LIBDIR)/ascope_core.so \
	  $(DESTDIR)$(INST_MANDIR)/ascope.1 $(DESTDIR)$(INST_COMPDIR)/ascope
	rm -rf $(DESTDIR)$(INST_LUADIR)/ascope $(DESTDIR)$(INST_TYPESDIR)
	-rmdir $(DESTDIR)$(PREFIX)/share/ascope 2>/dev/null

# `luarocks make` (the rockspec's make build): ascope_core.so built against the yajl, libcsv and
# SQLite LuaRocks found, in its own build folder, then installed where LuaRocks says.
rock:
	$(MAKE) BUILD=build-rock build-rock/ascope_core.so

rock-install:
	$(MAKE) BUILD=build-rock install-lua

# The API reference (LDoc, from Debian's lua-ldoc and lua-discount) in build/doc/, from the doc
# comments of the modules config.ld lists; any warning fails. The lua-language-server
# definitions of the same API are types/ (see .luarc.json).
doc:
	ldoc --fatalwarnings .

# The source tarball the rockspec's source.url names, with the rockspec beside it:
# `cd build/dist && luarocks build ascope-$(VERSION)-1.rockspec` (LuaRocks unpacks next to it).
# GNU tar format: LuaRocks' own tar reader knows GNU long names, not the pax headers git archive
# writes for paths over 100 characters.
dist:
	rm -rf $(BUILD)/dist && mkdir -p $(BUILD)/dist
	git archive --prefix=ascope-$(VERSION)/ HEAD | tar -x -C $(BUILD)/dist
	tar --format=gnu --sort=name --owner=0 --group=0 --numeric-owner -C $(BUILD)/dist \
	  -czf $(BUILD)/dist/ascope-$(VERSION).tar.gz ascope-$(VERSION)
	rm -rf $(BUILD)/dist/ascope-$(VERSION)
	cp ascope-$(VERSION)-1.rockspec $(BUILD)/dist/

clean:
	rm -rf build build-asan build-portable build-rock build-fuzz

.PHONY: all binaries doc test sanitize portable valgrind bench lint install install-lua uninstall rock rock-install dist clean ctests check-html screenshots fuzz slurm-check

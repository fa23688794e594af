# ascope build. `make` builds build/ascope (one self-contained executable) and
# build/ascope_core.so (the same primitives for a stock lua5.4).
CC      ?= gcc
LUA     ?= lua5.4
PREFIX  ?= /usr/local
BUILD   ?= build
LUAINC  ?= /usr/include/lua5.4
LIBDIR  ?= /usr/lib/x86_64-linux-gnu
WARN    := -Wall -Wextra -Werror -Wno-unused-parameter
CFLAGS  ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -fPIC -Iinclude -I$(LUAINC) $(CFLAGS) $(EXTRA_CFLAGS)

PRIM_SRCS := src/error.c src/strtab.c src/column.c src/decimal.c src/json_scan.c \
             src/csv_read.c src/csv_write.c src/interval.c src/match.c src/bin.c src/db.c \
             src/fs.c src/par.c
BIND_SRCS := src/lcolumn.c src/ljson.c src/ljson_writer.c src/lcsv.c src/linterval.c src/lmatch.c src/lbin.c \
             src/ldb.c src/lfs.c src/lpar.c src/core.c
LUA_FILES := $(shell find lua -name '*.lua' | sort) $(shell find rules -name '*.lua' | sort)

PRIM_OBJS := $(PRIM_SRCS:src/%.c=$(BUILD)/obj/%.o)
BIND_OBJS := $(BIND_SRCS:src/%.c=$(BUILD)/obj/%.o)
HOST_OBJS := $(BUILD)/obj/main.o $(BUILD)/obj/embedded.o
STATIC_LIBS := $(LIBDIR)/liblua5.4.a $(LIBDIR)/liblua5.4-lpeg.a $(LIBDIR)/libyajl_s.a \
               $(LIBDIR)/libcsv.a $(LIBDIR)/libsqlite3.a
SHARED_LIBS := -lyajl -lcsv -lsqlite3

all: $(BUILD)/ascope $(BUILD)/ascope_core.so

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

# C unit tests of the primitives (no Lua)
C_TESTS := $(patsubst spec/c/%.c,$(BUILD)/ctest/%,$(wildcard spec/c/test_*.c))
$(BUILD)/ctest/%: spec/c/%.c spec/c/ctest.h $(PRIM_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(PRIM_OBJS) $(STATIC_LIBS) -lm -ldl -lpthread

ctests: $(C_TESTS)

test: all ctests
	@ASCOPE_BUILD=$(BUILD) sh spec/run.sh

# The same suite built with AddressSanitizer and UBSan (separate build folder).
sanitize:
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined" all ctests
	ASAN_OPTIONS=detect_leaks=1 ASCOPE_BUILD=build-asan ASCOPE_RUNNER=host sh spec/run.sh

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

# A one-node Slurm cluster (munged, slurmctld, slurmd started as root in a temporary folder) runs
# examples/slurm over a generated tree; the merged outputs must be the single run's, byte for
# byte. Needs the Debian packages slurmctld slurmd slurm-client munge (.ci/run installs them).
slurm-check: all
	ASCOPE_BUILD=$(BUILD) sh spec/slurm_check.sh

bench: all $(BUILD)/bench/noop_yajl $(BUILD)/bench/noop_csv $(BUILD)/bench/measure
	$(BUILD)/ascope run spec/bench/run.lua --build $(BUILD) $(BENCH_ARGS)

lint:
	luacheck lua rules spec examples
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --std=c11 -Iinclude src
	clang-format --dry-run --Werror src/*.c src/*.h include/ascope/*.h

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/lua/5.4 \
	  $(DESTDIR)$(PREFIX)/share/lua/5.4 $(DESTDIR)$(PREFIX)/share/ascope
	install -m 755 $(BUILD)/ascope $(DESTDIR)$(PREFIX)/bin/ascope
	install -m 644 $(BUILD)/ascope_core.so $(DESTDIR)$(PREFIX)/lib/lua/5.4/ascope_core.so
	cd lua && find ascope -name '*.lua' -exec install -D -m 644 {} $(DESTDIR)$(PREFIX)/share/lua/5.4/{} \;
	cp -r rules $(DESTDIR)$(PREFIX)/share/ascope/

clean:
	rm -rf build build-asan

.PHONY: all test sanitize valgrind bench lint install clean ctests check-html slurm-check

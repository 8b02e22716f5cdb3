# The direction of sim/'s layers, on linked symbols (scripts/layers.sh):
#   layers_hold        the build's objects use nothing from a higher layer
#                      and no two modules depend on each other (registries
#                      and their plugins aside);
#   planted_upward     an object in base/ calling sim_run (run/) is found,
#                      and the message names the symbol;
#   planted_cycle      two model/ objects calling each other are found;
#   unknown_folder     an object folder that is not a layer is refused;
#   planted_include    a base/ source including a run/ header is found;
#   key_tables_typed   no key table in sim/ names its field with a bare
#                      offsetof (sim/io/keytab.h's typed macros check the
#                      field's C type against the key kind);
#   wrong_type_refused a key table entry declaring an int key over a double
#                      field, or a string key over a char * field, does not
#                      compile, and the error names why;
#   testbed_no_cli     build/testbed holds no code of specsim's command line
#                      (sim/cli/): it reads --set/--seed/--reps through the
#                      library (sim/config/overrides.c); a program linked
#                      with cli_opt.o is caught;
#   public_exports     build/libspecsim.a defines exactly the functions
#                      declared SPECSIM_API in sim/ (sim/specsim.h), each once;
#   public_links       a program calling version_string links against it;
#   private_unlinkable one calling engine_create (private) does not;
#   cli_public_only    sim/cli/ includes no library header but specsim.h.
# The plants are compiled objects added to a copy of the build's, so the
# check is tried on the same kind of input it judges.
. tests/cli/lib.sh

# It reads objects that do not depend on the sanitizer: once per suite run.
case "$BUILD" in
*asan*) echo "skip layers: checked with the optimised build"; exit 0 ;;
esac

if scripts/layers.sh "$BUILD/sim" >"$TMP/out" 2>&1; then pass layers_hold
else fail layers_hold "$(cat "$TMP/out")"; fi

plant() { # plant NAME FOLDER SOURCE: a copy of the objects plus one more
    rm -rf "$TMP/sim" && cp -r "$BUILD/sim" "$TMP/sim" &&
        mkdir -p "$TMP/sim/$2" && printf '%s\n' "$3" >"$TMP/$1.c" &&
        ${CC:-cc} -c -o "$TMP/sim/$2/$1.o" "$TMP/$1.c"
}

plant planted base 'int sim_run(void); int planted_up(void) { return sim_run(); }'
scripts/layers.sh "$TMP/sim" >"$TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'base/planted -> run/sim: sim_run' "$TMP/out"; then
    pass planted_upward
else fail planted_upward "exit $rc: $(cat "$TMP/out")"; fi

plant planta model 'int plantb_f(void); int planta_f(void) { return plantb_f(); }'
printf 'int planta_f(void); int plantb_f(void) { return planta_f() + 1; }\n' >"$TMP/b.c"
${CC:-cc} -c -o "$TMP/sim/model/plantb.o" "$TMP/b.c"
scripts/layers.sh "$TMP/sim" >"$TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'cycle among: .*model/planta' "$TMP/out" &&
   grep -q 'model/plantb' "$TMP/out"; then
    pass planted_cycle
else fail planted_cycle "exit $rc: $(cat "$TMP/out")"; fi

plant stray misc 'int stray_f(void) { return 1; }'
scripts/layers.sh "$TMP/sim" >"$TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'misc/: folder is not a layer' "$TMP/out"; then
    pass unknown_folder
else fail unknown_folder "exit $rc: $(cat "$TMP/out")"; fi

rm -rf "$TMP/src" && cp -r sim "$TMP/src" &&
    printf '#include "run/sim.h"\n' >>"$TMP/src/base/err.c"
scripts/layers.sh "$BUILD/sim" "$TMP/src" >"$TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'upward include: sim/base/err.c includes a run/ header' "$TMP/out"; then
    pass planted_include
else fail planted_include "exit $rc: $(cat "$TMP/out")"; fi

if grep -rnE '\.(off|aux) = offsetof' sim --include='*.c' >"$TMP/bare"; then
    fail key_tables_typed "bare offsetof in a key table: $(cat "$TMP/bare")"
else pass key_tables_typed; fi

cat >"$TMP/wrong.c" <<'EOC'
#include "io/keytab.h"
typedef struct { double x; } wrong_t;
const keytab_key_t WRONG[] = {{.name = "x", KEYTAB_INT(wrong_t, x)}, {.name = NULL}};
EOC
cat >"$TMP/wrong2.c" <<'EOC'
#include "io/keytab.h"
typedef struct { char *name; } wrong_t;
const keytab_key_t WRONG[] = {{.name = "n", KEYTAB_STRING(wrong_t, name)}, {.name = NULL}};
EOC
ok=1
for w in wrong wrong2; do
    if ${CC:-cc} -std=c11 -Isim -c -o "$TMP/$w.o" "$TMP/$w.c" 2>"$TMP/err"; then
        ok=0; echo "  $w.c compiled"
    elif ! grep -q 'field_type_differs_from_key_kind' "$TMP/err"; then
        ok=0; head -c 400 "$TMP/err"
    fi
done
if [ "$ok" = 1 ]; then pass wrong_type_refused
else fail wrong_type_refused "a mistyped key table compiled, or failed for another reason"; fi

# The command line's functions are hidden in their objects, so in a program
# they are local (t): compare the names, whatever the binding.
nm "$BUILD/sim/cli/"*.o | awk '$2 == "T" { print $3 }' | grep -vx main | sort -u >"$TMP/clisyms"
cli_in() { # cli_in BINARY: the command line's functions BINARY holds
    nm "$1" | awk '$2 ~ /^[Tt]$/ { print $3 }' | sort -u | comm -12 "$TMP/clisyms" -
}
printf 'int cli_opt_u64(const char *, unsigned long *);\nint main(void) { unsigned long x; return cli_opt_u64("1", &x); }\n' >"$TMP/tbplant.c"
${CC:-cc} -std=c11 -o "$TMP/tbplant" "$TMP/tbplant.c" "$BUILD/sim/cli/cli_opt.o" \
    "$BUILD/libspecsim_all.a" -lgsl -lgslcblas -lyaml -lm -lpthread 2>"$TMP/err"
if [ ! -x "$BUILD/testbed" ]; then fail testbed_no_cli "no $BUILD/testbed"
elif [ -n "$(cli_in "$BUILD/testbed")" ]; then
    fail testbed_no_cli "build/testbed links sim/cli/ code: $(cli_in "$BUILD/testbed" | tr '\n' ' ')"
elif [ ! -x "$TMP/tbplant" ] || [ -z "$(cli_in "$TMP/tbplant")" ]; then
    fail testbed_no_cli "a program linked with cli_opt.o was not caught: $(head -c 300 "$TMP/err")"
else pass testbed_no_cli; fi

lib="$BUILD/libspecsim.a"
sed -n 's/^SPECSIM_API [^(]*[ *]\([a-z_0-9]*\)(.*/\1/p' sim/*/*.h | sort >"$TMP/api"
nm "$lib" | awk '$2 ~ /^[TDRBVWG]$/ { print $3 }' | sort >"$TMP/exported"
if [ ! -s "$TMP/api" ]; then fail public_exports "no SPECSIM_API declarations found"
elif cmp -s "$TMP/api" "$TMP/exported"; then pass public_exports
else fail public_exports "declared vs exported: $(diff "$TMP/api" "$TMP/exported" | grep '^[<>]' | tr '\n' ' ')"; fi

printf '#include "specsim.h"\nint main(void) { return version_string()[0] == 0; }\n' >"$TMP/pub.c"
if ${CC:-cc} -std=c11 -Isim -o "$TMP/pub" "$TMP/pub.c" "$lib" -lgsl -lgslcblas -lyaml -lm \
       -lpthread 2>"$TMP/err" && "$TMP/pub"; then pass public_links
else fail public_links "$(head -c 400 "$TMP/err")"; fi

printf 'void *engine_create(void);\nint main(void) { return engine_create() != 0; }\n' >"$TMP/priv.c"
if ${CC:-cc} -std=c11 -o "$TMP/priv" "$TMP/priv.c" "$lib" -lgsl -lgslcblas -lyaml -lm -lpthread 2>"$TMP/err"; then
    fail private_unlinkable "a call to engine_create linked against $lib"
elif grep -q 'undefined reference to .engine_create' "$TMP/err"; then pass private_unlinkable
else fail private_unlinkable "$(head -c 400 "$TMP/err")"; fi

if grep -n '#include "' sim/cli/*.c sim/cli/*.h | grep -v '"cli/\|"specsim.h"' >"$TMP/inc"; then
    fail cli_public_only "$(cat "$TMP/inc")"
else pass cli_public_only; fi

#!/bin/sh
# llm_inputs.sh — bad input to the real-model runtime: `llm generate`,
# `spec`, `agree`, `accept`, `bench` and `testbed run SCENARIO
# --real-model`. Every case must be refused with exit status 2, exactly one
# line on stderr naming the file (FILE:LINE:COL and the key or category
# for text inputs) or the option, nothing on stdout, and no file written
# where the command has --out (accept's directory, the testbed's CSV).
# A testbed usage error may add its "(see testbed run --help)" line.
#
# Inputs: GGUF files cut at several points of the real model
# (scripts/fetch-model.sh: header, metadata, an array, tensor infos, data;
# `head -c` copies, one of 60 MB) and a tiny LLaMA with a byte-level
# tokenizer built here with Python's struct, valid and then broken one way
# each (another architecture, an unknown tensor type, an offset past the
# end, absurd tensor, key and array counts, a shape the metadata
# contradicts, a missing tensor, a vocabulary the tokenizer disagrees with,
# line breaks and a NUL in quoted names), a directory and a missing path;
# bad option values; bad prompt files (empty, no `###` section, an empty
# prompt, no category, not UTF-8, a NUL, past the 16 MiB cap, a directory);
# bad ids and reference files for `agree`. The tiny model keeps this fast
# under ASan: the real model is only read, never loaded whole.
. tests/cli/lib.sh
LLM=$BUILD/llm
TESTBED=$BUILD/testbed

if ! model=$(scripts/fetch-model.sh 2>"$TMP/err"); then
    fail llm_inputs_model "$(tail -n 1 "$TMP/err")"
    exit 1
fi
command -v python3 >/dev/null || { fail llm_inputs_python3 "python3 is missing"; exit 1; }
mkdir "$TMP/acc" || exit 1

# ---- the tiny model and its broken copies --------------------------------
# tiny.gguf: 2 layers, hidden 8 (2 heads, 1 KV head), FFN 16, context 256,
# F32 weights; GPT-2 byte symbols (ids 0-255), <|im_start|> <|im_end|>
# <|endoftext|> (control), "he" (one merge); a ChatML template.
python3 - "$TMP" <<'EOF' 2>"$TMP/err" || { fail llm_inputs_gen "$(tail -n 1 "$TMP/err")"; exit 1; }
import random, struct, sys
out = sys.argv[1]

def s(b):
    b = b.encode() if isinstance(b, str) else b
    return struct.pack('<Q', len(b)) + b

def kv(key, vt, payload): return s(key) + struct.pack('<I', vt) + payload
def kstr(key, v): return kv(key, 8, s(v))
def ku32(key, v): return kv(key, 4, struct.pack('<I', v))
def kf32(key, v): return kv(key, 6, struct.pack('<f', v))
def karr(key, et, items):
    body = b''.join(s(x) if et == 8 else struct.pack('<i', x) for x in items)
    return kv(key, 9, struct.pack('<IQ', et, len(items)) + body)

def byte_alphabet():   # GPT-2's bytes_to_unicode, by byte
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256 + n); n += 1
    return [chr(c) for _, c in sorted(zip(bs, cs))]

def model(name, arch='llama', meta_hidden=8, drop=None, ttype=0, toff=None, rows=260,
          pre='smollm', dup=None):
    H, F = 8, 16
    toks = byte_alphabet() + ['<|im_start|>', '<|im_end|>', '<|endoftext|>', 'he']
    if dup: toks[254] = toks[255] = dup
    m = [kstr('general.architecture', arch), ku32('llama.block_count', 2),
         ku32('llama.context_length', 256), ku32('llama.embedding_length', meta_hidden),
         ku32('llama.feed_forward_length', F), ku32('llama.attention.head_count', 2),
         ku32('llama.attention.head_count_kv', 1), kf32('llama.rope.freq_base', 10000.0),
         kf32('llama.attention.layer_norm_rms_epsilon', 1e-5),
         kstr('tokenizer.ggml.model', 'gpt2'), kstr('tokenizer.ggml.pre', pre),
         karr('tokenizer.ggml.tokens', 8, toks),
         karr('tokenizer.ggml.token_type', 5, [1] * 256 + [3, 3, 3, 1]),
         karr('tokenizer.ggml.merges', 8, ['h e']),
         ku32('tokenizer.ggml.bos_token_id', 256), ku32('tokenizer.ggml.eos_token_id', 257),
         kstr('tokenizer.chat_template', '<|im_start|>system\nYou are tiny.<|im_end|>\n')]
    ts = [('token_embd.weight', [H, rows]), ('output_norm.weight', [H])]
    for L in range(2):
        p = 'blk.%d.' % L
        ts += [(p + 'attn_norm.weight', [H]), (p + 'attn_q.weight', [H, H]),
               (p + 'attn_k.weight', [H, H // 2]), (p + 'attn_v.weight', [H, H // 2]),
               (p + 'attn_output.weight', [H, H]), (p + 'ffn_norm.weight', [H]),
               (p + 'ffn_gate.weight', [H, F]), (p + 'ffn_up.weight', [H, F]),
               (p + 'ffn_down.weight', [F, H])]
    rnd, ti, data = random.Random(1), b'', b''
    for tname, ne in ts:
        if tname == drop: continue
        data += b'\0' * (-len(data) % 32)
        n = ne[0] * (ne[1] if len(ne) > 1 else 1)
        odd = tname == 'output_norm.weight'
        ti += s(tname) + struct.pack('<I', len(ne)) + b''.join(struct.pack('<Q', e) for e in ne)
        ti += struct.pack('<IQ', ttype if odd else 0, toff if odd and toff else len(data))
        base = 1.0 if len(ne) == 1 else 0.0
        data += b''.join(struct.pack('<f', base + 0.3 * (2 * rnd.random() - 1)) for _ in range(n))
    nt = len(ts) - (drop is not None)
    head = b'GGUF' + struct.pack('<IQQ', 3, nt, len(m)) + b''.join(m) + ti
    img = head + b'\0' * (-len(head) % 32) + data
    open(out + '/' + name + '.gguf', 'wb').write(img)
    return img

good = model('tiny')
model('arch', arch='mamba')
model('archnl', arch='lla\nma')
model('hidden', meta_hidden=12)
model('missing', drop='blk.1.ffn_down.weight')
model('ttype', ttype=99)
model('offset', toff=1 << 40)
model('rows', rows=250)
model('prenl', pre='smol\nlm')
model('prenul', pre='smollm\0x')
model('dupnl', dup='a\nb')

def patch(name, off, fmt, v):
    b = bytearray(good)
    struct.pack_into(fmt, b, off, v)
    open(out + '/' + name + '.gguf', 'wb').write(b)

patch('version', 4, '<I', 4)
patch('ntensors', 8, '<Q', 1 << 63)
patch('nkv', 16, '<Q', (1 << 63) - 1)
patch('keylen', 24, '<Q', (1 << 63) + 5)
patch('arrlen', good.index(b'tokenizer.ggml.tokens') + 21 + 8, '<Q', (1 << 63) - 2)
patch('bosid', good.index(b'tokenizer.ggml.bos_token_id') + 27 + 4, '<I', 0xFFFFFFF0)

# agree's reference files for the ids 5 6 7 (llamacpp-ref.py's format):
# magic, n_seq, n_vocab, K = 16; per sequence n_pos; per position the
# token, the top-16 ids and logits, and at every 8th position a full row.
def ref(name, ids=(5, 6, 7), magic=b'SPLREF1\0', vocab=260, top3=3, topv=0.0, tail=b''):
    b = magic + struct.pack('<III', 1, vocab, 16) + struct.pack('<I', len(ids))
    for i, t in enumerate(ids):
        top = list(range(16)); top[3] = top3
        b += struct.pack('<I', t) + struct.pack('<16I', *top) + struct.pack('<16f', *[topv] * 16)
        if i % 8 == 0: b += struct.pack('<%df' % vocab, *[0.0] * vocab)
    open(out + '/' + name + '.bin', 'wb').write(b + tail)
    return b

full = ref('ref')
ref('ref-magic', magic=b'XPLREF1\0')
ref('ref-vocab', vocab=300)
ref('ref-top', top3=0xFFFFFFF0)
ref('ref-nan', topv=float('nan'))
ref('ref-tail', tail=b'more')
open(out + '/ref-short.bin', 'wb').write(full[:-3])

# Prompt files.
P = {'empty': b'', 'nosec': b'just text\n', 'emptyprompt': b'### a\n\n### b\nx\n',
     'nocat': b'### a\nx\n###\ny\n', 'utf8': b'### a\nx\xff\xfey\n', 'nul': b'### a\nx\0y\n',
     'good': b'# prompts\n### a\nhello there\n### b\nthe end\n',
     'big': b'### a\n' + b'x' * (16 << 20)}
for k, v in P.items(): open(out + '/p-' + k + '.txt', 'wb').write(v)
EOF
mkdir "$TMP/dir.gguf" "$TMP/dir.txt" || exit 1
: >"$TMP/empty.gguf"
echo "not a model" >"$TMP/text.gguf"
# The real model cut in its header, in a metadata key, inside an array,
# in the tensor infos and in the tensor data (offsets: its layout).
head -c 12 "$model" >"$TMP/cut-header.gguf"
head -c 1769060 "$model" >"$TMP/cut-key.gguf"
head -c 800000 "$model" >"$TMP/cut-array.gguf"
head -c 1775000 "$model" >"$TMP/cut-tinfo.gguf"
head -c 60000000 "$model" >"$TMP/cut-data.gguf"
printf '5\n6\n7\n' >"$TMP/ids.txt"
cat >"$TMP/tb.yaml" <<'EOF'
name: llm-inputs
seed: 1
duration: 0.3s
warmup: 0s
protocol: {mode: sync, gamma: 2}
acceptance: {model: iid, alpha: 0.8}
tenants:
  count: 1
  edge: {draft_time: 2ms, prefill_time: 5ms}
  network: {rtt: 10ms}
  workload: {arrival: closed, think: 10ms, prompt_tokens: 8, output_tokens: 8}
cloud:
  verify_time: 5ms
  batching: {policy: continuous, max_batch: 2, max_tokens: 16, multi_block: false}
EOF

# refuse NAME WANT CMD...: exit 2, one line on stderr holding WANT (fixed
# text), nothing on stdout, nothing in $TMP/acc, no $TMP/tb.csv.
refuse() {
    name=llm_inputs_$1 want=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    lines=$(grep -cv '^(see testbed run --help)$' "$TMP/err")
    left=$(ls -A "$TMP/acc"; [ -e "$TMP/tb.csv" ] && echo tb.csv)
    if [ "$rc" -ne 2 ]; then fail "$name" "exit $rc, expected 2: $(head -c 400 "$TMP/err")"
    elif [ "$lines" -ne 1 ]; then fail "$name" "$lines lines on stderr: $(head -c 400 "$TMP/err")"
    elif ! grep -qF -- "$want" "$TMP/err"; then fail "$name" "no '$want' in: $(head -c 400 "$TMP/err")"
    elif [ -s "$TMP/out" ]; then fail "$name" "wrote to stdout: $(head -c 200 "$TMP/out")"
    elif [ -n "$left" ]; then fail "$name" "wrote $(echo "$left" | tr '\n' ' ')"
    else pass "$name"; fi
    rm -rf "$TMP/tb.csv" "$TMP/acc" && mkdir "$TMP/acc"
}

# The commands, model file last (each otherwise valid: see the baselines).
generate() { "$LLM" generate --chat hi --tokens 2 "$@"; }
spec() { "$LLM" spec --chat hi --tokens 2 --tenants 1 "$@"; }
agree() { "$LLM" agree --ids "$TMP/ids.txt" --ref "$TMP/ref.bin" --min-top1 0 "$@"; }
accept() { "$LLM" accept --prompts "$TMP/p-good.txt" --out "$TMP/acc" --tokens 4 "$@"; }
bench() { "$LLM" bench --steps 3 --context 2 --batch 2 "$@"; }
testbed() { "$TESTBED" run "$TMP/tb.yaml" --quiet --out "$TMP/tb.csv" "$@"; }
CMDS="generate spec agree accept bench testbed"

# ---- baselines: the tiny model and the files above are good -----------------
t=$TMP/tiny.gguf
for c in generate spec agree accept bench; do
    if $c --model "$t" >"$TMP/out" 2>"$TMP/err"; then pass "llm_inputs_baseline_$c"
    else fail "llm_inputs_baseline_$c" "exit $?: $(head -c 300 "$TMP/err")"; fi
done
set -- "$TMP"/acc/*
if [ $# -eq 3 ]; then pass llm_inputs_baseline_accept_files
else fail llm_inputs_baseline_accept_files "$(ls "$TMP/acc")"; fi
rm -rf "$TMP/acc" && mkdir "$TMP/acc"
if testbed --real-model "$t" >"$TMP/out" 2>"$TMP/err" && [ -s "$TMP/tb.csv" ]; then
    pass llm_inputs_baseline_testbed
else fail llm_inputs_baseline_testbed "exit $?: $(head -c 300 "$TMP/err")"; fi
rm -f "$TMP/tb.csv"

# ---- GGUF files -----------------------------------------------------------------
# gguf_case NAME FILE TEXT [COMMANDS]: the message holds "FILE: TEXT", for
# each command (default: all). The testbed reads the file as `llm` does
# (gguf.c, tok.c, llm.c), so a few cases of each layer cover it there.
gguf_case() {
    for c in ${4:-$CMDS}; do
        if [ "$c" = testbed ]; then refuse "${c}_$1" "$2: $3" "$c" --real-model "$2"
        else refuse "${c}_$1" "$2: $3" "$c" --model "$2"; fi
    done
}
LLMCMDS="generate spec agree accept bench"
gguf_case absent "$TMP/absent.gguf" "cannot open: No such file"
gguf_case dir "$TMP/dir.gguf" "not a regular file (a directory)"
gguf_case empty "$TMP/empty.gguf" "truncated: the header" "$LLMCMDS"
gguf_case text "$TMP/text.gguf" "not a GGUF file" "$LLMCMDS"
gguf_case cut_header "$TMP/cut-header.gguf" "truncated: the header"
gguf_case cut_key "$TMP/cut-key.gguf" "truncated: metadata key 31" "$LLMCMDS"
gguf_case cut_array "$TMP/cut-array.gguf" \
    "metadata key 25 ('tokenizer.ggml.token_type'): an array of 49152" "$LLMCMDS"
gguf_case cut_tinfo "$TMP/cut-tinfo.gguf" "truncated: tensor info 92" "$LLMCMDS"
gguf_case cut_data "$TMP/cut-data.gguf" "tensor 'blk.2.ffn_up.weight': data at 59572288 + 552960 bytes runs past the end of the file (60000000 bytes)"
gguf_case version "$TMP/version.gguf" "GGUF version 4 is not supported" "$LLMCMDS"
gguf_case ntensors "$TMP/ntensors.gguf" "tensor count 9223372036854775808 is more than"
gguf_case nkv "$TMP/nkv.gguf" "metadata key count 9223372036854775807 is more than" "$LLMCMDS"
gguf_case keylen "$TMP/keylen.gguf" "truncated: metadata key 0 needs 9223372036854775813 bytes" "$LLMCMDS"
gguf_case arrlen "$TMP/arrlen.gguf" \
    "metadata key 11 ('tokenizer.ggml.tokens'): an array of 9223372036854775806"
gguf_case ttype "$TMP/ttype.gguf" "tensor 'output_norm.weight': unknown type 99"
gguf_case offset "$TMP/offset.gguf" "tensor 'output_norm.weight': offset 1099511627776 lies past" "$LLMCMDS"
gguf_case arch "$TMP/arch.gguf" "architecture 'mamba' is not supported"
gguf_case hidden "$TMP/hidden.gguf" "tensor 'token_embd.weight' has shape 8 x 260 (2 dims); the metadata gives 12 x 260"
gguf_case missing "$TMP/missing.gguf" "tensor 'blk.1.ffn_down.weight' is missing" "$LLMCMDS"
gguf_case rows "$TMP/rows.gguf" "the tokenizer has 260 tokens but the model's vocabulary"
gguf_case prenl "$TMP/prenl.gguf" "tokenizer.ggml.pre 'smol?lm'"
gguf_case prenul "$TMP/prenul.gguf" "tokenizer.ggml.pre holds a NUL byte" "$LLMCMDS"
gguf_case dupnl "$TMP/dupnl.gguf" "token 255 'a?b' is token 254 again" "$LLMCMDS"
gguf_case bosid "$TMP/bosid.gguf" "tokenizer.ggml.bos_token_id 4294967280 is not a token id" generate
# A line break in the architecture's name must not split the message.
gguf_case archnl "$TMP/archnl.gguf" "architecture 'lla" generate

# A test name's part for a value: "w4a16:+1" -> w4a16_plus1.
tname() { printf '%s' "$1" | sed 's/ /sp/g; s/+/plus/g; s/-/neg/g; s/[^a-z0-9]/_/g'; }

# ---- model specs --------------------------------------------------------------
spec_case() {   # NAME OPTION COMMAND SPEC TEXT
    refuse "$1" "$5" "$3" --model "$t" "$2" "$4"
}
for s in w3 :0 fp16:0 w4a16:abc w4a16: "w4a16: 1" w4a16:+1 fp16:-2; do
    n=$(tname "$s")
    spec_case "generate_weights_$n" --weights generate "$s" "llm generate: --weights: model '$s'"
    spec_case "spec_draft_$n" --draft spec "$s" "llm spec: --draft: model '$s'"
done
spec_case spec_target_w3 --target spec w3 "llm spec: --target: model 'w3'"
spec_case accept_target_w3 --target accept w3 "llm accept: --target: model 'w3'"
spec_case accept_drafts_w3 --drafts accept w4a16,w3 "llm accept: --drafts: model 'w3'"
spec_case accept_drafts_empty --drafts accept w4a16,,fp16:1 "llm accept: --drafts 'w4a16,,fp16:1': an empty entry"
spec_case accept_drafts_comma --drafts accept , "llm accept: --drafts ',': an empty entry"
spec_case accept_drafts_twice --drafts accept w4a16,fp16:1,w4a16 "llm accept: --drafts: 'w4a16' given twice"
# bench must check its whole list before it measures the first spec.
spec_case bench_weights_w3 --weights bench fp16,w3 "model 'w3'"
spec_case bench_weights_comma --weights bench , "--weights"
refuse testbed_draft_w3 "model 'w3'" testbed --real-model "$t" --draft w3
# More layers than the file has: the real model has 30.
refuse generate_layers_31 "$model: 31 layers asked for; the model has 30" \
    generate --model "$model" --weights w4a16:31
refuse testbed_layers_31 "$model: 31 layers asked for; the model has 30" \
    testbed --real-model "$model" --draft w4a16:31
refuse spec_layers_3 "$t: 3 layers asked for; the model has 2" spec --model "$t" --draft fp16:3

# ---- option values --------------------------------------------------------------
# Each command with only what it requires, so that any option may be added.
gen() { "$LLM" generate --model "$t" --chat hi "$@"; }
spc() { "$LLM" spec --model "$t" --chat hi "$@"; }
agr() { "$LLM" agree --model "$t" --ids "$TMP/ids.txt" --ref "$TMP/ref.bin" "$@"; }
acc() { "$LLM" accept --model "$t" --prompts "$TMP/p-good.txt" --out "$TMP/acc" "$@"; }
ben() { "$LLM" bench --model "$t" "$@"; }
for v in 0 -1 abc 1.5 " 3" 0x3 +3 1e3 99999999999; do
    n=$(tname "$v")
    refuse "generate_tokens_$n" "llm generate: --tokens '$v': expected an integer from 1 to 65536" \
        gen --tokens "$v"
done
refuse spec_gamma_0 "llm spec: --gamma '0': expected an integer from 1 to 64" spc --gamma 0
refuse spec_gamma_65 "llm spec: --gamma '65': expected an integer from 1 to 64" spc --gamma 65
refuse spec_gamma_x "llm spec: --gamma 'x'" spc --gamma x
refuse spec_window_0 "llm spec: --window '0'" spc --mode async --window 0
refuse spec_window_sync "llm spec: --window is the async mode's" spc --window 2
refuse spec_tenants_0 "llm spec: --tenants '0'" spc --tenants 0
refuse spec_batch_0 "llm spec: --batch '0'" spc --batch 0
refuse spec_batch_sp "llm spec: --batch ' 2'" spc --batch " 2"
refuse spec_mode "llm spec: --mode 'fast'" spc --mode fast
refuse spec_check_temp "llm spec: --check compares greedy texts" spc --check --temp 1
refuse spec_two_prompts "llm spec: give one of --prompts, --chat and --prompt" spc --prompt hi
refuse generate_seed_frac "llm generate: --seed '1.5': expected a whole number" gen --seed 1.5
refuse spec_seed_neg "llm spec: --seed '-1'" spc --seed -1
refuse accept_seed_frac "llm accept: --seed '2.5'" acc --seed 2.5
refuse generate_temp_nan "llm generate: --temp 'nan'" gen --temp nan
refuse generate_temp_inf "llm generate: --temp 'inf'" gen --temp inf
refuse generate_temp_neg "llm generate: --temp '-0.5'" gen --temp -0.5
refuse generate_unknown "llm generate: unknown option '--bogus'" gen --bogus
refuse spec_unknown "llm spec: unknown option '--drafts'" spc --drafts w4a16
refuse agree_unknown "llm agree: unknown option '--bogus'" agr --bogus 1
refuse accept_unknown "llm accept: unknown option '--draft'" acc --draft w4a16
refuse bench_unknown "llm bench: unknown option '--tokens'" ben --tokens 3
refuse generate_twice "llm generate: --tokens given twice" gen --tokens 3 --tokens=3
refuse spec_twice "llm spec: --gamma given twice" spc --gamma 2 --gamma 3
refuse accept_twice "llm accept: --out given twice" acc --out "$TMP/acc"
refuse bench_twice "llm bench: --steps given twice" ben --steps 3 --steps 3
refuse generate_novalue "llm generate: --seed needs a value" gen --seed
refuse generate_weights_empty "llm generate: --weights needs a value" gen --weights=
refuse generate_flagvalue "llm generate: --ids takes no value" gen --ids=1
refuse generate_positional "llm generate: unexpected argument 'extra'" gen extra
refuse agree_top1 "llm agree: --min-top1 '2'" agr --min-top1 2
refuse accept_tokens_1 "llm accept: --tokens '1'" acc --tokens 1
refuse accept_label_nl "llm accept: --label holds a control character" acc --label "$(printf 'a\nb')"
refuse bench_steps_2 "llm bench: --steps '2'" ben --steps 2
refuse bench_batch_1 "llm bench: --batch '1'" ben --batch 1
refuse bench_context_0 "llm bench: --context '0'" ben --context 0
refuse generate_no_model "llm generate: --model is required" "$LLM" generate --chat hi
refuse no_command "llm: no command given" "$LLM"
refuse unknown_command "llm: unknown command 'bogus'" "$LLM" bogus
refuse testbed_unknown "testbed run: unknown option '--drafts'" testbed --real-model "$t" --drafts w4a16
refuse testbed_twice "testbed run: option '--draft' given more than once" \
    testbed --real-model "$t" --draft w4a16 --draft fp16
# A prompt and --tokens past the model's context (256 tokens; the chat
# turn of "hi" is 44 tokens here).
refuse generate_context "llm generate: --chat: 44 prompt tokens and 250 more exceed the model's context of 256" \
    "$LLM" generate --model "$t" --chat hi --tokens 250
refuse spec_context "llm spec: --chat: 44 prompt tokens and 250 more exceed" \
    "$LLM" spec --model "$t" --chat hi --tokens 250
refuse accept_context "$TMP/p-good.txt:2:1: prompt 'a':" \
    "$LLM" accept --model "$t" --prompts "$TMP/p-good.txt" --out "$TMP/acc" --tokens 250
# accept's --out: an existing directory, checked before any measurement.
for d in nowhere ids.txt; do
    why="no such directory"
    [ "$d" = ids.txt ] && why="not a directory"
    refuse "accept_out_$(echo "$d" | tr -c 'a-z\n' _)" "llm accept: --out '$TMP/$d': $why" \
        "$LLM" accept --model "$t" --prompts "$TMP/p-good.txt" --out "$TMP/$d"
done

# ---- prompt files: spec, accept, testbed ---------------------------------------
prompt_case() {   # NAME FILE TEXT
    refuse "spec_prompts_$1" "$2$3" "$LLM" spec --model "$t" --tokens 2 --prompts "$2"
    refuse "accept_prompts_$1" "$2$3" \
        "$LLM" accept --model "$t" --out "$TMP/acc" --tokens 4 --prompts "$2"
    refuse "testbed_prompts_$1" "$2$3" testbed --real-model "$t" --prompts "$2"
}
prompt_case empty "$TMP/p-empty.txt" ": no prompt ('### CATEGORY' lines)"
prompt_case nosec "$TMP/p-nosec.txt" ":1:1: text before the first '### CATEGORY' line"
prompt_case emptyprompt "$TMP/p-emptyprompt.txt" ":1:1: prompt 'a' has no text"
prompt_case nocat "$TMP/p-nocat.txt" ":3:4: a prompt's '###' line needs one category word"
prompt_case utf8 "$TMP/p-utf8.txt" ":2:2: byte 0xff is not UTF-8"
prompt_case nul "$TMP/p-nul.txt" ":2:2: a NUL byte"
prompt_case big "$TMP/p-big.txt" ": larger than 16 MiB"
prompt_case dir "$TMP/dir.txt" ": not a regular file (a directory)"
prompt_case absent "$TMP/absent.txt" ": cannot open: No such file"

# ---- agree's ids and reference files ---------------------------------------------
printf '5\nx\n' >"$TMP/ids-word.txt"
printf '5\n260\n' >"$TMP/ids-big.txt"
printf ' 5\n6\n' >"$TMP/ids-space.txt"
printf '5\n+6\n' >"$TMP/ids-plus.txt"
: >"$TMP/ids-empty.txt"
awk 'BEGIN { for (i = 0; i < 257; i++) print i % 200 }' >"$TMP/ids-long.txt"
ids_case() {   # NAME FILE TEXT
    refuse "agree_$1" "$2$3" "$LLM" agree --model "$t" --ids "$2" --ref "$TMP/ref.bin"
}
ids_case ids_word "$TMP/ids-word.txt" ":2:1: expected a token id below 260"
ids_case ids_big "$TMP/ids-big.txt" ":2:1: expected a token id below 260"
ids_case ids_space "$TMP/ids-space.txt" ":1:1: expected a token id"
ids_case ids_plus "$TMP/ids-plus.txt" ":2:1: expected a token id"
ids_case ids_empty "$TMP/ids-empty.txt" ": no token id"
ids_case ids_long "$TMP/ids-long.txt" ":257:1: a sequence of more than 256 ids"
ids_case ids_dir "$TMP/dir.txt" ": not a regular file (a directory)"
ref_case() {   # NAME FILE TEXT
    refuse "agree_$1" "$2$3" "$LLM" agree --model "$t" --ids "$TMP/ids.txt" --ref "$2"
}
ref_case ref_magic "$TMP/ref-magic.bin" ": not a reference file"
ref_case ref_vocab "$TMP/ref-vocab.bin" ": a reference for a vocabulary of 300 tokens; the model has 260"
ref_case ref_top "$TMP/ref-top.bin" ": position 0 of a sequence: top id 4294967280"
ref_case ref_nan "$TMP/ref-nan.bin" ": position 0 of a sequence: top id 0 with logit nan"
ref_case ref_tail "$TMP/ref-tail.bin" ": bytes after its last sequence"
ref_case ref_short "$TMP/ref-short.bin" ": truncated"
ref_case ref_dir "$TMP/dir.txt" ": not a regular file (a directory)"
ref_case ref_absent "$TMP/absent.bin" ": cannot open: No such file"
# --f16: the F16 copy must hold every tensor of the model, of its size.
refuse agree_f16_missing "$TMP/missing.gguf: tensor 'blk.1.ffn_down.weight' of the model is missing" \
    agr --f16 "$TMP/missing.gguf"
refuse agree_f16_size "$TMP/rows.gguf: tensor 'token_embd.weight' has 2000 elements; the model's has 2080" \
    agr --f16 "$TMP/rows.gguf"
refuse agree_f16_bad "$TMP/ttype.gguf: tensor 'output_norm.weight': unknown type 99" \
    agr --f16 "$TMP/ttype.gguf"

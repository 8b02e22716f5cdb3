# results/validation/published.csv, the published measurements of real
# serving engines (issue 23, docs/validation.md), is well formed:
#   published_header      the header row names the documented columns, in order;
#   published_fields      every data row has as many fields as the header;
#   published_ids_unique  no id appears twice;
#   published_sources     every row has an http(s) source URL, a pin and a
#                         place in the source;
#   published_groups      every group and regime is a known one;
#   published_metrics     every metric and unit is a known one;
#   published_values      every value is a positive number;
#   published_split       every split is fit or holdout, a source's rows are
#                         all on one side, and both sides have rows;
#   published_counts      at least 40 GPU rows and 15 edge rows;
#   published_cards       every model_card is none or a card in models/llm/,
#                         every hardware_card none, unknown or a card in
#                         models/hardware/ (a misspelt card would read as
#                         "no card" in scripts/validate-published.sh).
# Each check lists every offending row, not only the first. It needs no build.
. tests/cli/lib.sh

CSV=results/validation/published.csv
HEADER="id,group,regime,split,source,source_url,source_pin,source_where,engine,engine_version,hardware,hardware_card,model,model_card,precision,tp,batch,input_tokens,output_tokens,context,metric,metric_as_published,value,unit,notes"

if [ ! -f "$CSV" ]; then
    fail published_header "$CSV: missing"
    exit 0
fi

# The data: comment lines (#) dropped, blank lines dropped.
grep -v -e '^#' -e '^[[:space:]]*$' "$CSV" >"$TMP/all"
head -n 1 "$TMP/all" >"$TMP/head"
tail -n +2 "$TMP/all" >"$TMP/rows"

if [ "$(cat "$TMP/head")" = "$HEADER" ]; then pass published_header
else fail published_header "got: $(cat "$TMP/head")"; fi

nf=$(printf '%s\n' "$HEADER" | awk -F, '{ print NF }')
awk -F, -v nf="$nf" 'NF != nf { printf "%s (%d fields, want %d)\n", $1, NF, nf }' \
    "$TMP/rows" >"$TMP/bad"
if [ ! -s "$TMP/rows" ]; then fail published_fields "no data rows"
elif [ -s "$TMP/bad" ]; then fail published_fields "$(tr '\n' ';' <"$TMP/bad")"
else pass published_fields; fi

cut -d, -f1 "$TMP/rows" | sort | uniq -d >"$TMP/bad"
if [ -s "$TMP/bad" ]; then fail published_ids_unique "repeated: $(tr '\n' ' ' <"$TMP/bad")"
else pass published_ids_unique; fi

# Columns by number (the header above): 1 id, 2 group, 3 regime, 4 split,
# 5 source, 6 source_url, 7 source_pin, 8 source_where, 21 metric,
# 23 value, 24 unit.
awk -F, '$6 !~ /^https?:\/\/[^ ]+$/ || $7 == "" || $8 == "" { print $1 }' \
    "$TMP/rows" >"$TMP/bad"
if [ -s "$TMP/bad" ]; then fail published_sources "no URL, pin or place: $(tr '\n' ' ' <"$TMP/bad")"
else pass published_sources; fi

awk -F, '
    $2 !~ /^(decode|verify|prefill|mixed|tp|quant|fp8|edge)$/ { print $1 " group=" $2 }
    $3 !~ /^(decode|verify|prefill|mixed)$/ { print $1 " regime=" $3 }' \
    "$TMP/rows" >"$TMP/bad"
if [ -s "$TMP/bad" ]; then fail published_groups "$(tr '\n' ';' <"$TMP/bad")"
else pass published_groups; fi

awk -F, '
    $21 !~ /^(decode_tok_s|output_tok_s|output_tok_s_per_gpu|prefill_tok_s|ttft|itl|e2e_latency|step_time)$/ {
        print $1 " metric=" $21 }
    $24 !~ /^(tok\/s|tok\/s\/GPU|ms|s|us|ns)$/ { print $1 " unit=" $24 }
    $22 == "" { print $1 " metric_as_published empty" }' \
    "$TMP/rows" >"$TMP/bad"
if [ -s "$TMP/bad" ]; then fail published_metrics "$(tr '\n' ';' <"$TMP/bad")"
else pass published_metrics; fi

awk -F, '$23 !~ /^([0-9]+\.?[0-9]*|\.[0-9]+)$/ || $23 + 0 <= 0 { print $1 " value=" $23 }' \
    "$TMP/rows" >"$TMP/bad"
if [ -s "$TMP/bad" ]; then fail published_values "$(tr '\n' ';' <"$TMP/bad")"
else pass published_values; fi

awk -F, '
    $4 != "fit" && $4 != "holdout" { print $1 " split=" $4; next }
    { n[$4]++
      if (($5) in side && side[$5] != $4) bad[$5] = 1
      side[$5] = $4 }
    END {
        for (s in bad) print "source " s " is on both sides"
        if (n["fit"] == 0) print "no fit rows"
        if (n["holdout"] == 0) print "no holdout rows"
    }' "$TMP/rows" >"$TMP/bad"
if [ -s "$TMP/bad" ]; then fail published_split "$(tr '\n' ';' <"$TMP/bad")"
else pass published_split; fi

gpu=$(awk -F, '$2 != "edge"' "$TMP/rows" | wc -l)
edge=$(awk -F, '$2 == "edge"' "$TMP/rows" | wc -l)
if [ "$gpu" -ge 40 ] && [ "$edge" -ge 15 ]; then pass published_counts
else fail published_counts "$gpu GPU rows (want >= 40), $edge edge rows (want >= 15)"; fi

awk -F, '{ print $1, $12, $14 }' "$TMP/rows" | while read -r id hw model; do
    case $hw in none|unknown) ;; *) [ -f "models/hardware/$hw.yaml" ] || echo "$id: hardware_card $hw" ;; esac
    [ "$model" = none ] || [ -f "models/llm/$model.yaml" ] || echo "$id: model_card $model"
done >"$TMP/bad"
if [ -s "$TMP/bad" ]; then fail published_cards "$(tr '\n' ';' <"$TMP/bad")"
else pass published_cards; fi

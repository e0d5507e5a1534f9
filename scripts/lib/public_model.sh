# Sourced by scripts: the public next-word model the keyboard demo starts
# from, pretrained without privacy on Debian's public text
# (scripts/public-corpus.sh: WordNet, the KJV bible and GCIDE; never the
# fortunes, which stand for the users' private text). It is trained once
# and cached under .deps/public-model/KEY/, KEY a SHA-256 of the training
# configuration and of the public text, so a later demo (or a changed
# configuration) finds or makes its own; the ignored .deps holds it.
#
#   ensure_public_model TRAINER
#   -> $public_model (the float model, .blm), $public_device_model (its int8
#      export, .blnw) and $public_dictionary (the export's vocabulary: the
#      words a keyboard shipping the public model knows)
#
# PUBLIC_EPOCHS (default 0.2) sets the pretraining's length: 0.2 epochs of
# the 5.4 M-word text take about 2 minutes on 2 cores (docs/language-model.md
# gives the quality of each length).
public_model_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
public_model_deps=${BLUR_DEPS_DIR:-$public_model_root/.deps}

ensure_public_model() {
  local trainer=$1
  local cache=$public_model_deps/public-model
  local text=$public_model_deps/public-text/public.txt
  mkdir -p "$cache"
  if [ ! -s "$text" ]; then
    echo "public model: building the public text (Debian's wordnet-base, bible-kjv, dict-gcide)"
    "$public_model_root/scripts/public-corpus.sh" "$text.partial" 2> "$cache/public-text.log" ||
      { cat "$cache/public-text.log" >&2; return 1; }
    mv "$text.partial" "$text"
  fi
  local config=(--format lines --epsilon inf --vocab-size 5000 --embedding 64 --hidden 128
                --epochs "${PUBLIC_EPOCHS:-0.2}" --batch 16 --learning-rate 1 --lr-schedule cosine
                --seed 1 --validation-noise 0)
  local key
  key=$( { printf '%s\n' "${config[@]}"; sha256sum < "$text"; } | sha256sum | cut -c1-16)
  local dir=$cache/$key
  public_model=$dir/public.blm
  public_device_model=$dir/public.blnw
  public_dictionary=$dir/public.blnw.vocab
  if [ -s "$public_dictionary" ] &&
     "$trainer" suggest --model "$public_model" --prompt "the" > /dev/null 2>&1; then
    echo "public model: cached ($dir, pretrained on $(wc -w < "$text") words of public text)"
    return 0
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  echo "public model: pretraining on $(wc -w < "$text") words of public text, once" \
       "(${PUBLIC_EPOCHS:-0.2} epochs, not private: no user's text); cached in $dir"
  # Progress every 500 steps, on the terminal.
  "$trainer" train --corpus "$text" "${config[@]}" --progress-every 500 \
    --out "$dir/public.blm.partial" > "$dir/public.json" 2> >(sed -u 's/^/  /' >&2) ||
    { rm -rf "$dir"; return 1; }
  mv "$dir/public.blm.partial" "$public_model"
  "$trainer" export-model --model "$public_model" --out "$public_device_model" \
    > "$dir/export.json" || { rm -rf "$dir"; return 1; }
}

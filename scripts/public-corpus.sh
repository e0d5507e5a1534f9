#!/usr/bin/env bash
# Public English text for pretraining the next-word model (one example per
# line: a sentence or a short passage), from Debian 12 packages:
#
#   scripts/public-corpus.sh OUT [ROOT]
#   scripts/public-corpus.sh --fetch-only    # the packages only (toolchains/setup.sh)
#
# Sources (SOURCES, space separated; output in that order; default
# "wordnet kjv gcide"):
#   wordnet   wordnet-base 3.0        WordNet 3.0 licence (permissive)  glosses + example sentences
#   kjv       bible-kjv(-text) 4.38   public domain text (the decoder, `bible`, is GPL-2+)
#   gcide     dict-gcide 0.48.5       GPL-2+ (Webster 1913 + WordNet 1.5)  definitions + quotations
#   devil, jargon, foldoc (dict-*), handbook (debian-handbook),
#   debref (debian-reference-en): optional; devil, jargon and foldoc are
#   quoted by the fortunes (the private corpus: 27, 12 and 26 identical
#   sentences), so they are not in the default.
# Never reads fortunes or fortunes-min (the private corpus).
#
# ROOT: where the packages' files are. Without it, the .debs are fetched
# with `apt-get download` (the machine's own apt sources; nothing is
# installed, so dictd's server never starts) into .deps/public-text
# ($BLUR_DEPS_DIR/public-text) and
# unpacked there. Deterministic: document order, exact duplicates dropped
# (the first kept). Per-source line and word counts go to stderr.
set -euo pipefail
export LC_ALL=C

fetch_only=0
if [ "${1:-}" = --fetch-only ]; then fetch_only=1; set -- /dev/null; fi
OUT=${1:?usage: public-corpus.sh OUT [ROOT] | --fetch-only}
ROOT=${2:-}
SOURCES=${SOURCES:-"wordnet kjv gcide"}

if [ -z "$ROOT" ]; then
  cache=${BLUR_DEPS_DIR:-$(cd "$(dirname "$0")/.." && pwd)/.deps}/public-text
  ROOT=$cache/root
  mkdir -p "$cache/debs" "$ROOT"
  for pkg in wordnet-base bible-kjv-text bible-kjv dict-gcide; do
    if ! ls "$cache/debs/${pkg}"_*.deb >/dev/null 2>&1; then
      echo "public-corpus: apt-get download $pkg" >&2
      (cd "$cache/debs" && apt-get download -qq "$pkg" >/dev/null 2>&1) ||
        (apt-get update -qq && cd "$cache/debs" && apt-get download -qq "$pkg" >/dev/null) ||
        { echo "public-corpus: cannot download $pkg from apt" >&2; exit 1; }
    fi
  done
  if [ ! -e "$ROOT/.unpacked" ]; then
    for deb in "$cache"/debs/*.deb; do dpkg-deb -x "$deb" "$ROOT"; done
    touch "$ROOT/.unpacked"
  fi
fi
ROOT=${ROOT%/}
[ "$fetch_only" = 0 ] || exit 0

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---------------------------------------------------------------- helpers --
# clean.pl: common per-example normaliser and filter (stdin -> stdout).
cat > "$tmp/clean.pl" <<'EOF'
use strict; use warnings;
my $minw = $ENV{MINW} // 3; my $maxw = $ENV{MAXW} // 120;
my %seen;
while (my $s = <STDIN>) {
  chomp $s;
  # UTF-8 punctuation -> ASCII
  $s =~ s/\xe2\x80[\x98\x99\xb2]/'/g; $s =~ s/\xe2\x80[\x9c\x9d\xb3]/"/g;
  $s =~ s/\xe2\x80[\x93\x90\x91]/-/g; $s =~ s/\xe2\x80[\x94\x95]/--/g;
  $s =~ s/\xe2\x80\xa6/.../g; $s =~ s/\xc2\xa0/ /g; $s =~ s/\xc2\xb7/./g;
  $s =~ s/\s+/ /g; $s =~ s/^ //; $s =~ s/ $//;
  next if $s =~ /[^\x20-\x7e]/;             # leftover non-ASCII
  next if $s =~ /[\\{}<>|_=#@^~*`\$]/;      # markup / code residue
  next if $s =~ /\?\w|\w\?\w/;              # GCIDE unknown-char marks
  next if $s =~ m{\w/\w|://};               # paths, urls
  my @w = split / /, $s; my $n = @w;
  next if $n < $minw || $n > $maxw;
  my $alpha = () = $s =~ /[A-Za-z ]/g;
  next if $alpha < 0.85 * length $s;
  next unless $s =~ /^["'(]?[A-Za-z]/;
  next if $ENV{REQEND} && $s !~ /[.!?]["')]?$/;
  next if $seen{$s}++;
  print "$s\n";
}
EOF

# split.pl: paragraphs (one per line on stdin) -> sentences (one per line).
cat > "$tmp/split.pl" <<'EOF'
use strict; use warnings;
my %abbr = map { $_ => 1 } qw(mr mrs ms dr st sr jr vs cf etc e.g i.e viz no vol pp p ed esp approx fig al eq ch sec
  gen ex lev num deut co inc ltd jan feb mar apr jun jul aug sep sept oct nov dec prof rev hon gov capt col gen lt mt ft);
while (my $p = <STDIN>) {
  chomp $p;
  $p =~ s/\xe2\x80[\x98\x99\xb2]/'/g; $p =~ s/\xe2\x80[\x9c\x9d\xb3]/"/g;   # curly quotes -> ASCII
  $p =~ s/\s+/ /g; $p =~ s/^ //; $p =~ s/ $//;
  next if $p eq '';
  my @t = split / /, $p; my @cur;
  for my $i (0..$#t) {
    push @cur, $t[$i];
    my $tok = $t[$i]; my $nxt = $i < $#t ? $t[$i+1] : undef;
    next unless defined $nxt;
    next unless $tok =~ /[.!?]["')\]]*$/;
    next unless $nxt =~ /^["'(]?[A-Z]/;
    (my $bare = lc $tok) =~ s/^["'(]+//; $bare =~ s/[.!?"')\]]+$//;
    next if $tok =~ /\.["')\]]*$/ && ($abbr{$bare} || $bare =~ /^[a-z]$/);
    print join(' ', @cur), "\n"; @cur = ();
  }
  print join(' ', @cur), "\n" if @cur;
}
EOF

# dictpara.pl MODE: dictd text on stdin -> cleaned paragraphs, one per line.
cat > "$tmp/dictpara.pl" <<'EOF'
use strict; use warnings;
my ($mode, $idx) = @ARGV; @ARGV = ();
# drop the dictd meta entries (00-database-*, 00databaseinfo, ...) by byte range
my $b64 = join '', 'A'..'Z', 'a'..'z', 0..9, '+', '/';
my %d; @d{split //, $b64} = 0..63;
sub dec { my $v = 0; $v = $v * 64 + $d{$_} for split //, shift; $v }
my @cut;
open my $ih, '<', $idx or die "$idx: $!";
while (<$ih>) { chomp; my ($w, $o, $n) = split /\t/; push @cut, [dec($o), dec($n)] if $w =~ /^00/ }
close $ih;
my $all = do { local $/; <STDIN> };
my @m;                                           # merge overlapping ranges
for my $r (sort { $a->[0] <=> $b->[0] } @cut) {
  my ($s, $e) = ($r->[0], $r->[0] + $r->[1]);
  if (@m && $s <= $m[-1][1]) { $m[-1][1] = $e if $e > $m[-1][1] } else { push @m, [$s, $e] }
}
substr($all, $_->[0], $_->[1] - $_->[0]) = '' for reverse @m;
my @paras = split /\n[ \t]*\n/, $all;
my $br;  $br  = qr/\[(?:[^\[\]]++|(??{$br}))*\]/;  # balanced [...]
my $par; $par = qr/\((?:[^()]++|(??{$par}))*\)/;   # balanced (...)
for my $p (@paras) {
  next if $p =~ /^\s*$/;
  my @l = split /\n/, $p;
  if ($mode eq 'gcide') {
    if ($l[0] =~ /^\S/) {                        # headword paragraph
      my $t = join ' ', @l;
      next unless $t =~ s/^.*?\\[^\\]*\\,?//;    # drop "Word \pron\,"
      $t =~ s/$br//g;
      $t =~ s/^[\s,;&]*(?:(?:[a-z]{1,6}\.|&|,|;|or|pl|sing)\s*)*//;
      $p = $t;
    } else { $p = join ' ', @l; }
    next if $p =~ /^\s*(?:Syn|See|Also)\b/;
    $p =~ s/\s--(?=[A-Z]).*$//;                  # "--Milton." attributions
    $p =~ s/$br//g;
    $p =~ s/^\s*Note:\s*//;
    $p =~ s/^\s*(?:\d+\.|\([a-z]\))\s*//; $p =~ s/^\s*\([a-z]\)\s*//;
    $p =~ s/^\s*\((?:(?:[A-Z][\w.'&]*|and|&)\s?)+\)\s*//;         # (Fine Arts), (Zool.)
    $p =~ s/\{([^{}]*)\}/$1/g;
  } elsif ($mode eq 'devil') {
    next unless @l;
    next if $l[0] =~ /^\S/ && @l == 1 && $l[0] !~ /\.\s+\S/;   # bare headword
    @l = grep { !/^\s{20,}\S/ } @l;              # right-aligned author lines
    next unless @l;
    $l[0] =~ s/^[A-Z][A-Z0-9' ,.&-]*?, (?:(?:n|v|adj|adv|pp|p|pron|prep|conj|interj|x|t|i)\.\s*)+//
      if $l[0] =~ /^[A-Z]/;
    $p = join ' ', @l;
    $p =~ s/_([^_]+)_/$1/g;
  } elsif ($mode eq 'jargon') {
    next if $l[0] =~ /^\S/;                      # headword (+ pron line)
    next if $l[0] =~ /^ \S/;                     # " /pron/, n." line
    next if $l[0] =~ /^\s{8,}/;                  # code / verse blocks
    $p = join ' ', @l;
    $p =~ s/^\s*\d+\.\s*//;
    $p =~ s/$br//g;
    $p =~ s/^\s*(?:[a-z]{1,5}\.\s*)+(?=[A-Z])//;       # leftover "n." / "vt."
    $p =~ s/\{\s*([^{}]*?)\s*\}/$1/g;
  } elsif ($mode eq 'foldoc') {
    next if $l[0] =~ /^\S/;                      # headword
    $p = join ' ', @l;
    next if $p =~ /^\s*[\[(]/;                   # refs, dates, urls
    $p =~ s/^\s*\d+\.\s*//;
    $p =~ s/<[^<>]*>//g;                         # <category> tags, emails
    $p =~ s/$br//g;
    $p =~ s/\{\(?[a-z]+:[^{}]*\}//g;             # {(http://...)}
    $p =~ s/\{([^{}]*)\}/$1/g;
  }
  $p =~ s/\s+/ /g; $p =~ s/^ //; $p =~ s/ $//;
  print "$p\n" if $p ne '';
}
EOF

# html.pl: HTML files (args) -> <p> paragraphs, one per line.
cat > "$tmp/html.pl" <<'EOF'
use strict; use warnings;
my %ent = (lt=>'<', gt=>'>', amp=>'&', quot=>'"', apos=>"'", nbsp=>' ');
for my $f (@ARGV) {
  open my $fh, '<', $f or die "$f: $!"; local $/; my $h = <$fh>; close $fh;
  $h =~ s/<(pre|table|script|style)\b.*?<\/\1>/ /gsi;
  # inline code/file/command markup: mark so that clean.pl drops the sentence
  $h =~ s/<(code|tt|kbd|samp)\b.*?<\/\1>/\x01/gsi;
  $h =~ s/<span class="(?:command|option|filename|literal|replaceable|userinput|computeroutput|varname|systemitem)"[^>]*>.*?<\/span>/\x01/gsi;
  while ($h =~ /<p\b[^>]*>(.*?)<\/p>|<div class="para"[^>]*>(.*?)<\/div>/gsi) {
    my $t = defined $1 ? $1 : $2;
    $t =~ s/<[^>]*>//g;
    $t =~ s/&(\w+);/exists $ent{$1} ? $ent{$1} : ' '/ge;
    $t =~ s/&#(\d+);/$1 < 128 ? chr($1) : ($1 == 8217 || $1 == 8216 ? "'" : ($1 == 8220 || $1 == 8221 ? '"' : ' '))/ge;
    $t =~ s/&#x([0-9a-f]+);/hex($1) < 128 ? chr(hex $1) : ' '/gei;
    $t =~ s/\s+/ /g; $t =~ s/^ //; $t =~ s/ $//;
    print "$t\n" if $t ne '';
  }
}
EOF

P=(perl)
clean()  { "${P[@]}" "$tmp/clean.pl"; }
split_() { "${P[@]}" "$tmp/split.pl"; }
have()   { for f in "$@"; do [ -e "$f" ] || { echo "skip $src: missing $f" >&2; return 1; }; done; }
dictd()  { local f="$ROOT/usr/share/dictd/$1.dict.dz"; have "$f" || return 0;
           zcat "$f" | perl "$tmp/dictpara.pl" "$1" "${f%.dict.dz}.index" | split_ | REQEND=1 clean; }

# ---------------------------------------------------------------- sources --
src_wordnet() {
  local d="$ROOT/usr/share/wordnet" f
  for f in data.noun data.verb data.adj data.adv; do have "$d/$f" || return 0; done
  # gloss = text after " | "; definitions and "quoted examples" separated by ';'
  cat "$d/data.noun" "$d/data.verb" "$d/data.adj" "$d/data.adv" | perl -ne '
    next if /^  /; next unless s/^.*? \| //; s/\s+$//;
    my @ex; while (s/;?\s*"([^"]+)"[^;"]*$//) { unshift @ex, $1 }   # trailing examples
    s/\s*;\s*$//;
    print "$_\n" if length;
    for my $e (@ex) { $e =~ s/\s+-+\s*[A-Z][\w .]*$//; print "$e\n" }' | clean
}

src_kjv() {
  local bin="$ROOT/usr/bin/bible"; [ -x "$bin" ] || bin=$(command -v bible || true)
  have "$ROOT/usr/lib/bible.data" || return 0
  [ -n "$bin" ] || { echo "skip kjv: no bible binary (apt install bible-kjv)" >&2; return 0; }
  if ldd "$bin" | grep -q "not found"; then
    echo "public-corpus: $bin needs a library this machine lacks:" >&2
    ldd "$bin" | grep "not found" >&2
    echo "(apt-get install libreadline8)" >&2
    exit 1
  fi
  "$bin" -f -p "$ROOT/usr/lib" gen1:1-rev22:21 | sed -E 's/^[0-9]?[A-Za-z]+[0-9]+:[0-9]+ //' | MINW=2 clean
}

src_gcide()  { dictd gcide; }
src_devil()  { dictd devil; }
src_jargon() { dictd jargon; }
src_foldoc() { dictd foldoc; }

src_handbook() {
  local d="$ROOT/usr/share/doc/debian-handbook/html/en-US"
  have "$d" || return 0
  find "$d" -maxdepth 1 -name '*.html' -print0 | sort -z | xargs -0 perl "$tmp/html.pl" | split_ | REQEND=1 clean
}

src_debref() {
  local d="$ROOT/usr/share/debian-reference"
  have "$d/index.en.html" || return 0
  find "$d" -maxdepth 1 -name 'ch*.en.html' -print0 | sort -z | xargs -0 perl "$tmp/html.pl" | split_ | REQEND=1 clean
}

# ------------------------------------------------------------------- main --
: > "$tmp/all"
totl=0; totw=0
for src in $SOURCES; do
  "src_$src" > "$tmp/$src.raw"
  # drop lines already emitted by an earlier source (exact match), keep order
  awk -v f="$tmp/all" 'BEGIN { while ((getline l < f) > 0) s[l] = 1 } !($0 in s)' "$tmp/$src.raw" > "$tmp/$src.txt"
  rm -f "$tmp/$src.raw"
  read -r l w < <(wc -lw < "$tmp/$src.txt")
  printf '%-10s lines %9d  words %10d\n' "$src" "$l" "$w" >&2
  totl=$((totl + l)); totw=$((totw + w))
  cat "$tmp/$src.txt" >> "$tmp/all"
  if [ -n "${KEEPDIR:-}" ]; then cp "$tmp/$src.txt" "$KEEPDIR/$src.txt"; fi
done
printf '%-10s lines %9d  words %10d\n' TOTAL "$totl" "$totw" >&2
mv "$tmp/all" "$OUT"

#!/usr/bin/env bash
# Build ingestbench's Debian images (images/debian/) on the engine DOCKER_HOST points at, from Debian packages only
# (no image registry is needed): a minbase root file system from debootstrap, imported with `docker import`, then one
# Dockerfile per component installing Debian's package over the host network (the containers reach the mirror this
# machine's apt uses).
#
#   bash scripts/build-images.sh              # every image
#   bash scripts/build-images.sh postgres-15  # some (names: --list)
#   bash scripts/build-images.sh --list       # name, tag, suite, packages
#
# Cached by content: each image carries the label org.ingestbench.recipe, the sha256 of what it is built from (its
# directory's files, the suite, its build args, and the base image's own recipe); an image whose label matches is not
# rebuilt, so a second run costs seconds. Each image is labelled org.ingestbench.packages with the Debian package
# versions inside it (dpkg-query), read after the build, and org.ingestbench=1 for `ingestbench gc`.
set -euo pipefail
cd "$(dirname "$0")/.."
export DOCKER_BUILDKIT=0   # the classic builder: --network host for apt, and no BuildKit cache to clean up

# name | tag | dir | suite | build args | packages recorded in the label
IMAGES=(
  "postgres-15|ingestbench/debian-postgres:15|postgres|bookworm|PG_MAJOR=15|postgresql-15"
  "postgres-17|ingestbench/debian-postgres:17|postgres|trixie|PG_MAJOR=17|postgresql-17"
  "clickhouse-18.16|ingestbench/debian-clickhouse:18.16|clickhouse|bookworm||clickhouse-server"
  "syslog-ng-3.38|ingestbench/debian-syslog-ng:3.38|syslog-ng|bookworm||syslog-ng-core syslog-ng-mod-sql syslog-ng-mod-http syslog-ng-mod-examples libdbd-pgsql"
  "syslog-ng-4.8|ingestbench/debian-syslog-ng:4.8|syslog-ng|trixie||syslog-ng-core syslog-ng-mod-sql syslog-ng-mod-http syslog-ng-mod-examples libdbd-pgsql"
  "rsyslog-8.2302|ingestbench/debian-rsyslog:8.2302|rsyslog|bookworm||rsyslog rsyslog-pgsql"
  "loadgen|ingestbench/debian-loadgen:20|loadgen|trixie||nodejs"
  "shaper|ingestbench/debian-shaper:bookworm|shaper|bookworm||iproute2"
)
BASE_RECIPE_VERSION=1   # bump when the base recipe below changes

die() { echo "build-images: $*" >&2; exit 1; }

# The Debian mirror this machine's apt uses (deb822 sources first, then the one-line format).
mirror() {
  local m=""
  if [ -r /etc/apt/sources.list.d/debian.sources ]; then
    m="$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)"
  fi
  if [ -z "$m" ] && [ -r /etc/apt/sources.list ]; then
    m="$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)"
  fi
  [ -n "$m" ] || die "no Debian mirror found in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list"
  echo "$m"
}

label() { docker image inspect --format "{{ index .Config.Labels \"$2\" }}" "$1" 2>/dev/null || true; }

sha() { sha256sum | cut -c1-64; }

# ingestbench/debian:<suite>, from debootstrap --variant=minbase
base() {
  local suite="$1" tag="ingestbench/debian:$1" m recipe
  m="$(mirror)"
  recipe="$(printf 'base %s %s minbase v%s\n' "$suite" "$m" "$BASE_RECIPE_VERSION" | sha)"
  if [ "$(label "$tag" org.ingestbench.recipe)" = "$recipe" ]; then echo "$recipe"; return 0; fi
  command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
  local root; root="$(mktemp -d /var/tmp/ingestbench-debootstrap.XXXXXX)"
  # shellcheck disable=SC2064
  trap "rm -rf '$root'" RETURN
  echo "build-images: debootstrap $suite (minbase) …" >&2
  debootstrap --variant=minbase "$suite" "$root" "$m" >"$root.log" 2>&1 || { tail -n 20 "$root.log" >&2; rm -f "$root.log"; die "debootstrap $suite failed"; }
  rm -f "$root.log"
  # apt inside the images: no recommends, no docs (smaller, and the same every build)
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$root/etc/apt/apt.conf.d/90ingestbench"
  rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/archives/"*.deb
  tar -C "$root" -c . | docker import \
    --change "LABEL org.ingestbench=1 org.ingestbench.recipe=$recipe org.ingestbench.suite=$suite" \
    --change 'ENV DEBIAN_FRONTEND=noninteractive' --change 'CMD ["/bin/bash"]' - "$tag" >/dev/null
  echo "$recipe"
}

build() {
  local name="$1" tag="$2" dir="images/debian/$3" suite="$4" args="$5" pkgs="$6"
  [ -d "$dir" ] || die "$name: no directory $dir"
  local base_recipe recipe
  base_recipe="$(base "$suite")"
  recipe="$( (printf '%s\n' "$suite" "$args" "$base_recipe"; find "$dir" -type f -print0 | sort -z | xargs -0 sha256sum) | sha)"
  if [ "$(label "$tag" org.ingestbench.recipe)" = "$recipe" ]; then
    echo "$name: $tag cached ($(label "$tag" org.ingestbench.packages))"
    return 0
  fi
  local bargs=(--build-arg "BASE=ingestbench/debian:$suite")
  local a
  for a in $args; do bargs+=(--build-arg "$a"); done
  echo "$name: building $tag from $dir on Debian $suite …"
  local t0=$SECONDS log; log="$(mktemp)"
  if ! docker build --network host --force-rm -q "${bargs[@]}" -t "$tag.build" "$dir" >"$log" 2>&1; then
    tail -n 30 "$log" >&2; rm -f "$log"; die "$name: docker build failed"
  fi
  rm -f "$log"
  local versions
  # shellcheck disable=SC2086
  versions="$(docker run --rm --network none --entrypoint dpkg-query "$tag.build" -W -f '${Package}=${Version} ' $pkgs | sed 's/ $//')"
  printf 'FROM %s\nLABEL org.ingestbench=1 org.ingestbench.recipe="%s" org.ingestbench.packages="%s" org.ingestbench.suite="%s"\n' \
    "$tag.build" "$recipe" "$versions" "$suite" | docker build -q -t "$tag" - >/dev/null
  docker rmi "$tag.build" >/dev/null
  echo "$name: built $tag in $((SECONDS - t0)) s ($versions)"
}


if [ "${1:-}" = --list ]; then
  for e in "${IMAGES[@]}"; do IFS='|' read -r n t _ s _ p <<<"$e"; printf '%-18s %-38s %-9s %s\n' "$n" "$t" "$s" "$p"; done
  exit 0
fi
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 ||
  die "no Docker engine answers${DOCKER_HOST:+ at $DOCKER_HOST}; start one with: bash scripts/docker-engine.sh start, then eval \"\$(bash scripts/docker-engine.sh env)\""
want=("$@")
for e in "${IMAGES[@]}"; do
  IFS='|' read -r n t d s a p <<<"$e"
  if [ ${#want[@]} -gt 0 ]; then
    hit=0; for w in "${want[@]}"; do [ "$w" = "$n" ] && hit=1; done
    [ $hit = 1 ] || continue
  fi
  build "$n" "$t" "$d" "$s" "$a" "$p"
done
if [ ${#want[@]} -gt 0 ]; then
  for w in "${want[@]}"; do
    printf '%s\n' "${IMAGES[@]}" | cut -d'|' -f1 | grep -qxF "$w" || die "no image named \"$w\" (bash scripts/build-images.sh --list)"
  done
fi

#!/usr/bin/env bash
# `npm run test:package`: the installable package, tried as a user tries it. Packs Threadline
# (npm pack builds dist/ through `prepack`), installs the tarball globally into a temporary
# prefix as docs/operations.md says (the package itself running no script on install, and no
# warning of install scripts once better-sqlite3's is allowed; no engine warning, every installed
# package's engines.node taking this Node and the oldest the package claims), starts `threadline serve --port <free port>` from an empty folder with
# nothing in the environment but PATH and HOME, and checks that it answers: a page of users,
# data/threadline.db created in that folder, GraphiQL and its prebuilt script. Prints the
# install's time and size; exits non-zero, saying what failed, on any failure. Everything lives in
# one temporary folder, removed at the end (kept, and named, when THREADLINE_KEEP_PACKAGE_TEST=1).
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d "${TMPDIR:-/tmp}/threadline-package.XXXXXX")
server_pid=

fail() {
  echo "test:package: FAILED: $*" >&2
  if [ -f "$work/serve.log" ]; then
    echo "--- threadline serve printed:" >&2
    tail -n 40 "$work/serve.log" >&2
  fi
  exit 1
}

cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then echo "test:package: the server ($server_pid) outlived SIGTERM" >&2; fi
  if [ "${THREADLINE_KEEP_PACKAGE_TEST:-}" = 1 ]; then echo "test:package: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

echo "test:package: packing into $work"
npm pack --silent --pack-destination "$work" >"$work/pack.log" 2>&1 || { cat "$work/pack.log" >&2; fail "npm pack"; }
tarball=$(ls "$work"/threadline-*.tgz 2>/dev/null | head -n 1)
[ -n "$tarball" ] || fail "npm pack made no threadline-*.tgz"
echo "test:package: $(basename "$tarball"), $(du -h "$tarball" | cut -f1)"

# The packed files: the build's output, no tests, benchmarks or sources.
tar -tzf "$tarball" >"$work/files.txt"
grep -q '^package/dist/main.js$' "$work/files.txt" || fail "the tarball lacks dist/main.js"
grep -q '^package/dist/assets/graphiql/graphiql.min.js$' "$work/files.txt" || fail "the tarball lacks the prebuilt page assets (dist/assets)"
if grep -E '^package/(src|test|bench|scripts)/' "$work/files.txt" >/dev/null; then fail "the tarball holds src/, test/, bench/ or scripts/ files"; fi

# The tarball holds the build: the package runs nothing on install. (npm counts `prepare` among a
# tarball's install scripts, though it runs it only for a folder or git install.)
scripts=$(tar -xOzf "$tarball" package/package.json | node -e "
const { scripts = {} } = JSON.parse(require('node:fs').readFileSync(0, 'utf8'))
console.log(['preinstall', 'install', 'postinstall', 'prepare'].filter((name) => name in scripts).join(', '))")
[ -z "$scripts" ] || fail "the packed package.json has install scripts: $scripts"

echo "test:package: npm install -g --allow-scripts=better-sqlite3 --prefix $work/prefix (better-sqlite3 may compile from source: minutes)"
started=$(date +%s)
npm install -g --allow-scripts=better-sqlite3 --no-audit --no-fund --prefix "$work/prefix" "$tarball" >"$work/install.log" 2>&1 || {
  tail -n 40 "$work/install.log" >&2
  fail "npm install -g of the tarball"
}
# better-sqlite3's install script (its native binding) is the only one: allowed, nothing is left to warn of.
if grep -A 4 'not yet covered by allowScripts' "$work/install.log" >&2; then
  fail "npm warned of install scripts not covered by --allow-scripts=better-sqlite3 (above)"
fi
seconds=$(($(date +%s) - started))
installed="$work/prefix/lib/node_modules/threadline"
# Every installed package, nested ones too: each has its package.json right under node_modules/[@scope/]name.
packages=$(find "$installed/node_modules" -name package.json | grep -Ec '/node_modules/(@[^/]+/)?[^/]+/package\.json$' || true)
echo "test:package: installed in ${seconds} s: $(du -sh "$work/prefix" | cut -f1) in the prefix, ${packages} packages"
for gone in react react-dom graphiql swagger-ui-dist; do
  [ ! -d "$installed/node_modules/$gone" ] || fail "the install pulled $gone: it should be a development dependency only"
done

# The package says engines node >=20.19: every installed package must run there. npm only warns
# (EBADENGINE) and installs anyway, so its warning fails the test; and each installed package's own
# engines.node is read against this machine's Node and the oldest the package claims (20.19.0), since
# a dependency asking for >=20.20, say, would install here without a warning. (Not against the whole
# claimed range: many packages leave out Node 21 or cap the majors they have tried.)
if grep -E 'EBADENGINE|Unsupported engine' "$work/install.log" >&2; then
  fail "npm warned of an unsupported engine while installing the tarball (above)"
fi
node --input-type=module - "$installed" "$PWD" >"$work/engines.txt" 2>&1 <<'EOF' || { cat "$work/engines.txt" >&2; fail "the check of the installed packages' engines (above)"; }
import { readFileSync, readdirSync, existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
const [installed, checkout] = process.argv.slice(2)
// semver as npm uses it: the installed tree's (Fastify depends on it), else the checkout's.
const from = [installed, checkout].find((dir) => existsSync(join(dir, 'node_modules/semver/package.json')))
if (from === undefined) throw new Error('no semver in the installed tree or the checkout to compare engines with')
const semver = createRequire(join(from, 'package.json'))('semver')
const read = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
const claimed = read(installed).engines?.node
if (typeof claimed !== 'string') throw new Error('the installed package.json has no engines.node')
const oldest = semver.minVersion(claimed).version
const packages = []
const walk = (modules) => {
  if (!existsSync(modules)) return
  for (const name of readdirSync(modules)) {
    if (name.startsWith('.')) continue
    const dirs = name.startsWith('@') ? readdirSync(join(modules, name)).map((inner) => join(modules, name, inner)) : [join(modules, name)]
    for (const dir of dirs) {
      if (!existsSync(join(dir, 'package.json'))) continue
      packages.push(dir)
      walk(join(dir, 'node_modules'))
    }
  }
}
walk(join(installed, 'node_modules'))
const refused = []
for (const dir of packages) {
  const { name, version, engines } = read(dir)
  const wanted = engines?.node
  if (typeof wanted !== 'string') continue
  // npm's own test (npm-install-checks), for this machine's Node and for the oldest claimed.
  const fits = [process.version, oldest].every((node) => semver.satisfies(node, wanted, { includePrerelease: true }))
  if (!fits) refused.push(`${name}@${version} asks for node ${wanted} (the package claims ${claimed}; this is ${process.version})`)
}
for (const line of refused) console.log(line)
const version = (name) => packages.filter((dir) => read(dir).name === name).map((dir) => read(dir).version).join(', ') || 'none'
console.log(`${packages.length} packages read; ${['light-my-request', 'cookie'].map((name) => `${name} ${version(name)}`).join(', ')}`)
process.exitCode = refused.length === 0 ? 0 : 1
EOF
echo "test:package: engines: $(tail -n 1 "$work/engines.txt"), each fits this Node and the oldest the package claims"

bin="$work/prefix/bin/threadline"
[ -x "$bin" ] || fail "no $bin after the install"
run() { env -i PATH="$PATH" HOME="${HOME:-/tmp}" "$@"; }
run "$bin" --help >"$work/help.txt" 2>&1 || { cat "$work/help.txt" >&2; fail "threadline --help"; }
grep -q 'serve' "$work/help.txt" || fail "threadline --help does not list serve"

port=$(node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close() })")
mkdir "$work/empty"
cd "$work/empty"
# env, not run(): a function would put a subshell between $! and the server, which the cleanup's kill would miss.
env -i PATH="$PATH" HOME="${HOME:-/tmp}" "$bin" serve --port "$port" >"$work/serve.log" 2>&1 &
server_pid=$!
base="http://127.0.0.1:$port"

# The first start migrates and seeds the demo data: give it up to a minute.
for _ in $(seq 1 120); do
  if curl -fs -o /dev/null "$base/health"; then break; fi
  kill -0 "$server_pid" 2>/dev/null || fail "threadline serve exited before answering"
  sleep 0.5
done
curl -fs -o /dev/null "$base/health" || fail "threadline serve did not answer on $base within a minute"

status=$(curl -s -o "$work/users.json" -w '%{http_code}' "$base/api/v1/users?limit=1")
[ "$status" = 200 ] || fail "GET /api/v1/users?limit=1 answered $status"
node -e "const b = JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8')); if (!Array.isArray(b.data) || b.data.length !== 1 || typeof b.data[0].id !== 'number') process.exit(1)" "$work/users.json" ||
  fail "GET /api/v1/users?limit=1 did not answer one user in data: $(head -c 300 "$work/users.json")"
[ -f "$work/empty/data/threadline.db" ] || fail "no data/threadline.db in the folder threadline serve was started from"

status=$(curl -s -o "$work/graphiql.html" -w '%{http_code}' -H 'accept: text/html' "$base/graphiql")
[ "$status" = 200 ] || fail "GET /graphiql answered $status"
script=$(grep -o 'src="[^"]*graphiql\.min\.js"' "$work/graphiql.html" | head -n 1 | sed -e 's/^src="//' -e 's/"$//')
[ -n "$script" ] || fail "the GraphiQL page loads no graphiql.min.js"
status=$(curl -s -o "$work/graphiql.min.js" -w '%{http_code}' "$base$script")
[ "$status" = 200 ] || fail "GET $script answered $status"
cmp -s "$work/graphiql.min.js" "$installed/dist/assets/graphiql/graphiql.min.js" || fail "GET $script did not answer the packaged dist/assets/graphiql/graphiql.min.js"

kill "$server_pid"
code=0
wait "$server_pid" || code=$?
server_pid=
[ "$code" = 0 ] || fail "threadline serve exited with $code on SIGTERM"

echo "test:package: ok: threadline serve from an empty folder answered users, GraphiQL and its assets; data/threadline.db created"

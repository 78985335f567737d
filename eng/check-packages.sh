#!/usr/bin/env bash
# Packs the solution into a temporary folder and checks what a NuGet user gets: exactly the
# library packages (CspNet, CspNet.Extensions.Hosting, CspNet.Remote, CspNet.NameServer,
# CspNet.NameServer.Etcd), each a .nupkg and a .snupkg, each with its README (src/X/PackageReadme.md),
# license expression, XML docs, repository metadata, a SourceLink map in its PDB and a
# deterministic build; and that a new console project referencing only CspNet restores nothing
# else (the core has no dependencies); and the service programs' .NET tool packages
# (CspNet.NameServer.Tool, CspNet.WorkerPool.Tool): a .nupkg each, a DotnetTool package with its
# command (cspnet-nameserver, cspnet-workerpool), README and license. Prints one line per failed
# item and exits non-zero if any failed.
#
#   bash eng/check-packages.sh          pack CspNet.sln -c Release, then check
#   bash eng/check-packages.sh DIR      check the packages already in DIR (no pack)
#
# .ci/run calls it before the tests (CI=true: paths in PDBs must then be mapped to /_/).
set -uo pipefail
cd "$(dirname "$0")/.."

packages=(CspNet CspNet.Extensions.Hosting CspNet.Remote CspNet.NameServer CspNet.NameServer.Etcd)
# Each tool package, its project folder and the command it installs.
tools=(CspNet.NameServer.Tool:NameServer:cspnet-nameserver CspNet.WorkerPool.Tool:WorkerPoolService:cspnet-workerpool)
failures=0
fail() { echo "check-packages: FAIL: $*"; failures=$((failures + 1)); }

if [ $# -ge 1 ]; then
  out=$1
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  echo "check-packages: dotnet pack CspNet.sln -c Release -o $out"
  if ! dotnet pack CspNet.sln -c Release -o "$out" >"$out/pack.log" 2>&1; then
    tail -n 40 "$out/pack.log"
    fail "dotnet pack CspNet.sln failed (its last lines are above)"
    exit 1
  fi
fi

# Only the libraries (with symbols) and the tools pack: samples, tests and benchmarks set IsPackable=false.
expected=$({ for p in "${packages[@]}"; do printf '%s\n' "$p" "$p"; done; for t in "${tools[@]}"; do printf '%s\n' "${t%%:*}"; done; } | sort)
found=$(find "$out" -maxdepth 1 \( -name '*.nupkg' -o -name '*.snupkg' \) -printf '%f\n' \
  | sed -E 's/\.[0-9]+\.[0-9]+\.[0-9]+([-+][^.]*)?\.s?nupkg$//' | sort)
if [ "$found" != "$expected" ]; then
  fail "expected a .nupkg and a .snupkg of each of ${packages[*]}, a .nupkg of each tool and nothing else; found: $(ls "$out" | tr '\n' ' ')"
fi

for p in "${packages[@]}"; do
  nupkg=$(find "$out" -maxdepth 1 -regex ".*/$p\.[0-9][^/]*\.nupkg" | head -n 1)
  snupkg=${nupkg%.nupkg}.snupkg
  if [ -z "$nupkg" ] || [ ! -f "$snupkg" ]; then
    fail "$p: no .nupkg with its .snupkg in $out"
    continue
  fi
  files=$(unzip -Z1 "$nupkg")
  nuspec=$(unzip -p "$nupkg" "$p.nuspec")
  has_file() { grep -qxF "$1" <<<"$files" || fail "$p: $(basename "$nupkg") lacks $1"; }
  has_spec() { grep -qE "$1" <<<"$nuspec" || fail "$p: nuspec lacks $2"; }

  has_file "README.md"
  has_file "lib/net10.0/$p.dll"
  has_file "lib/net10.0/$p.xml"
  has_spec '<readme>README.md</readme>' "<readme>README.md</readme>"
  has_spec '<license type="expression">MIT</license>' 'the license expression MIT'
  has_spec '<projectUrl>https://' 'a projectUrl'
  has_spec '<repository type="git" url="https://[^"]+"[^>]* commit="[0-9a-f]{40}"' \
    'repository metadata (type git, https url, commit)'
  [ -s "src/$p/PackageReadme.md" ] || fail "$p: src/$p/PackageReadme.md is missing or empty"
  [ -s "src/$p/PackageReadme.md" ] && ! cmp -s <(unzip -p "$nupkg" README.md) "src/$p/PackageReadme.md" \
    && fail "$p: the packed README.md is not src/$p/PackageReadme.md"
  # grep -c reads to the end: with -q, unzip would die of SIGPIPE and pipefail report it.
  unzip -p "$nupkg" "lib/net10.0/$p.xml" | grep -c '<member name="T:' >/dev/null \
    || fail "$p: lib/net10.0/$p.xml documents no type"

  grep -qxF "lib/net10.0/$p.pdb" <(unzip -Z1 "$snupkg") \
    || fail "$p: $(basename "$snupkg") lacks lib/net10.0/$p.pdb"

  # The DLL and PDB: a Reproducible (deterministic) debug directory entry, the PDB path mapped
  # to /_/ in CI builds, and a SourceLink map to https URLs at the packed commit.
  tmp=$(mktemp -d)
  unzip -q -o "$nupkg" "lib/net10.0/$p.dll" -d "$tmp"
  unzip -q -o "$snupkg" "lib/net10.0/$p.pdb" -d "$tmp"
  commit=$(sed -nE 's/.* commit="([0-9a-f]{40})".*/\1/p' <<<"$nuspec")
  while IFS= read -r problem; do
    [ -n "$problem" ] && fail "$p: $problem"
  done < <(python3 - "$tmp/lib/net10.0/$p.dll" "$tmp/lib/net10.0/$p.pdb" "${commit:-none}" "${CI:-}" <<'EOF'
import re, struct, sys
dll, pdb, commit, ci = sys.argv[1], open(sys.argv[2], 'rb').read(), sys.argv[3], sys.argv[4]
pe = open(dll, 'rb').read()
# PE header -> optional header -> data directory 6 (debug) -> entries of 28 bytes each.
peo = struct.unpack_from('<I', pe, 0x3C)[0]
sections = struct.unpack_from('<H', pe, peo + 6)[0]
opt = peo + 24
dirs = opt + (96 if struct.unpack_from('<H', pe, opt)[0] == 0x10B else 112)
rva, size = struct.unpack_from('<II', pe, dirs + 6 * 8)
def offset(r):
    for i in range(sections):
        s = opt + struct.unpack_from('<H', pe, peo + 20)[0] + 40 * i
        vsize, vaddr, _, raw = struct.unpack_from('<IIII', pe, s + 8)
        if vaddr <= r < vaddr + vsize:
            return r - vaddr + raw
    return None
types, pdbpath = set(), ''
start = offset(rva) if size else None
for i in range(size // 28 if start is not None else 0):
    # IMAGE_DEBUG_DIRECTORY: Type at +12, PointerToRawData at +24.
    typ = struct.unpack_from('<I', pe, start + 28 * i + 12)[0]
    dataptr = struct.unpack_from('<I', pe, start + 28 * i + 24)[0]
    types.add(typ)
    if typ == 2:  # CodeView: 'RSDS', GUID, age, then the PDB path
        pdbpath = pe[dataptr + 24:pe.index(b'\0', dataptr + 24)].decode()
if 16 not in types:
    print('the DLL is not deterministic (no Reproducible debug directory entry)')
if ci == 'true' and not pdbpath.startswith('/_/'):
    print(f'CI build, but the DLL names its PDB by a machine path ({pdbpath}): ContinuousIntegrationBuild is off')
m = re.search(rb'\{"documents":\{[^}]*\}\}', pdb)
if not m:
    print('the PDB has no SourceLink map')
else:
    urls = re.findall(rb':"(https://[^"]+)"', m.group(0))
    if not urls or any(commit.encode() not in u for u in urls):
        print(f'the SourceLink map does not point to https URLs at commit {commit}: {m.group(0).decode()}')
EOF
)
  rm -rf "$tmp"
done

for t in "${tools[@]}"; do
  IFS=: read -r p folder command <<<"$t"
  nupkg=$(find "$out" -maxdepth 1 -regex ".*/$p\.[0-9][^/]*\.nupkg" | head -n 1)
  if [ -z "$nupkg" ]; then
    fail "$p: no .nupkg in $out"
    continue
  fi
  files=$(unzip -Z1 "$nupkg")
  nuspec=$(unzip -p "$nupkg" "$p.nuspec")
  grep -qxF "README.md" <<<"$files" || fail "$p: $(basename "$nupkg") lacks README.md"
  cmp -s <(unzip -p "$nupkg" README.md) "$folder/PackageReadme.md" || fail "$p: the packed README.md is not $folder/PackageReadme.md"
  grep -qE '<packageType name="DotnetTool"' <<<"$nuspec" || fail "$p: not a .NET tool package (no packageType DotnetTool)"
  grep -qE '<license type="expression">MIT</license>' <<<"$nuspec" || fail "$p: nuspec lacks the license expression MIT"
  grep -qE '<repository type="git" url="https://[^"]+"[^>]* commit="[0-9a-f]{40}"' <<<"$nuspec" \
    || fail "$p: nuspec lacks repository metadata (type git, https url, commit)"
  settings=$(unzip -p "$nupkg" "tools/net10.0/any/DotnetToolSettings.xml" 2>/dev/null | tr -d '\r')
  grep -qE "<Command Name=\"$command\" EntryPoint=\"$command\.dll\"" <<<"$settings" \
    || fail "$p: tools/net10.0/any/DotnetToolSettings.xml does not install the command $command: ${settings:-missing}"
done

# A user's first project: a console program that references only the CspNet package must
# restore CspNet and nothing else (no Microsoft.Extensions package: AddCspNet is
# CspNet.Extensions.Hosting's). Restored from the packed folder alone, into an empty package
# folder, outside the repository so none of its Directory.*.props apply.
consumer_check() {
  local nupkg version dir libraries
  nupkg=$(find "$out" -maxdepth 1 -regex ".*/CspNet\.[0-9][^/]*\.nupkg" | head -n 1)
  [ -n "$nupkg" ] || { fail "consumer: no CspNet .nupkg to restore"; return; }
  version=$(basename "$nupkg" .nupkg); version=${version#CspNet.}
  dir=$(mktemp -d)
  cat >"$dir/Consumer.csproj" <<XML
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net10.0</TargetFramework>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="CspNet" Version="$version" />
  </ItemGroup>
</Project>
XML
  cat >"$dir/nuget.config" <<XML
<configuration>
  <packageSources>
    <clear />
    <add key="packed" value="$out" />
  </packageSources>
</configuration>
XML
  if ! dotnet restore "$dir/Consumer.csproj" --packages "$dir/packages" >"$dir/restore.log" 2>&1; then
    tail -n 20 "$dir/restore.log"
    fail "consumer: a console project referencing only CspNet $version does not restore from the packed folder alone (its last lines are above)"
  else
    libraries=$(python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1]))["libraries"])))' "$dir/obj/project.assets.json")
    [ "$libraries" = "CspNet/$version" ] \
      || fail "consumer: a console project referencing only CspNet restores more than CspNet: $libraries"
  fi
  rm -rf "$dir"
}
consumer_check

if [ "$failures" -eq 0 ]; then
  echo "check-packages: ok: ${packages[*]} (.nupkg and .snupkg: README, license, XML docs, repository, SourceLink, deterministic); a project referencing only CspNet restores nothing else; tools: ${tools[*]%%:*}"
  exit 0
fi
echo "check-packages: $failures item(s) failed"
exit 1

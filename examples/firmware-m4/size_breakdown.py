"""Flash and static RAM of firmware images by origin, from their linker maps.

    python3 size_breakdown.py [--budget IMAGE=BYTES ...]
        [--image-budget IMAGE=FLASH,RAM ... --emulator "COMMAND"] IMAGE.map ...

Sums the sizes of the input sections the linker kept (the "Linker script
and memory map" part of a GNU ld map), by the archive or object they came
from: Blur's SDK, mbedTLS, nanopb with the generated schema, the board
port, the example's own code, and the C runtime. Flash is .text, .rodata,
.ARM.exidx and the load image of .data; static RAM is .data and .bss.

The RAM array that stands in for the board's flash on QEMU (the section
.bss.blur_emulated_storage) is listed apart and counted in neither.

With --budget IMAGE=BYTES (size_budgets.cmake), the SDK's own flash in
IMAGE must not pass BYTES: exit status 1 if it does. With --image-budget
IMAGE=FLASH,RAM, the whole image must fit a part of FLASH bytes of flash
and RAM bytes of RAM: its flash, and its static RAM plus the peak stack it
prints ("stack high-water mark N bytes") when run under the emulator
(IMAGE.elf beside IMAGE.map).

    python3 size_breakdown.py --compare WITHOUT.map WITH.map

Checks the SDK's line of an image linked without and with BLUR_SDK_LTO
(link-time optimization of the SDK's code, whose output the linker map
names after GCC's temporary partitions): every input section (a function or
an object, with -ffunction-sections and -fdata-sections) outside the SDK
must be in both, with the same size (on RISC-V within a few bytes of
linker relaxation), and the whole image must shrink by at least what the
SDK's line shrinks (less what relaxation or alignment padding between
sections grew), so nothing moved
into or out of the SDK's line. Exit status 1 if not.
"""
import re
import shlex
import subprocess
import sys

STORAGE = "emulated storage (QEMU's stand-in for flash)"

GROUPS = (
    # (With BLUR_SDK_LTO the SDK's code comes out of GCC's link-time
    # partitions, temporary objects named *.ltrans<N>.ltrans.o: only the
    # SDK's objects carry intermediate code, so those are the SDK's.)
    ("SDK (libblur_sdk, libblur_client)", ("libblur_sdk.a", "libblur_client", ".ltrans.o")),
    ("mbedTLS", ("libblur_mbedtls.a",)),
    ("nanopb + schema", ("libblur_nanopb.a", "libblur_proto.a")),
    ("board port", ("libblur_port_bare_metal.a", "libblur_emulated_flash.a")),
    ("example", ("main.cpp.obj", "mechanism_cost.cpp.obj")),
)

def group_of(path):
    for name, needles in GROUPS:
        if any(n in path for n in needles):
            return name
    return "C runtime (picolibc, libgcc, libstdc++)"

def input_sections(whole):
    """The input sections the linker kept, as (name, size, group, origin)."""
    text = whole[whole.index("Linker script and memory map"):]
    # An input section: name, then (maybe on the next line) address, size, file.
    pattern = re.compile(r"^ (\.[\w.$]+)\s*\n?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$", re.M)
    for name, address, size, origin in pattern.findall(text):
        size = int(size, 16)
        if size == 0 or int(address, 16) == 0:
            continue
        group = STORAGE if name.startswith(".bss.blur_emulated_storage") else group_of(origin)
        yield name, size, group, origin

def breakdown(path):
    whole = open(path).read()
    flash, ram = {}, {}
    for name, size, group, _ in input_sections(whole):
        if name.startswith((".text", ".rodata", ".ARM.exidx", ".data")):
            flash[group] = flash.get(group, 0) + size
        if name.startswith((".data", ".bss")):
            ram[group] = ram.get(group, 0) + size
    name = image = path.rsplit("/", 1)[-1].removesuffix(".map")
    print(f"  {name} by origin (flash / static RAM, from the linker map):")
    for name, _ in GROUPS + (("C runtime (picolibc, libgcc, libstdc++)", ()),):
        print(f"    {name:40} {flash.get(name, 0):6} B / {ram.get(name, 0):5} B")
    if STORAGE in ram:
        print(f"    ({STORAGE}, not counted: {ram[STORAGE]} B of RAM)")
    sdk = sum(flash.get(n, 0) for n in (GROUPS[0][0], "mbedTLS", "nanopb + schema"))
    sdk_ram = sum(ram.get(n, 0) for n in (GROUPS[0][0], "mbedTLS", "nanopb + schema"))
    print(f"    SDK-attributable (SDK + mbedTLS + nanopb): {sdk} B flash, {sdk_ram} B static RAM")
    total_flash, total_ram = image_totals(whole, ram.get(STORAGE, 0))
    print(f"    whole image: flash {total_flash} B, static RAM {total_ram} B (without the emulated "
          "storage and the reserved stack)")
    return image, flash.get(GROUPS[0][0], 0), total_flash, total_ram, sum(flash.values())

NOT_LOADED = (".debug", ".comment", ".ARM.attributes", ".stab", ".gnu.build.attributes")

def image_totals(text, storage):
    """Flash and static RAM of the whole image, from its output sections and
    the memory regions: flash is what lies in the flash region or loads from
    it (.data's image), RAM what lies in the RAM region, less the reserved
    stack (the measured peak replaces it) and the emulated storage."""
    memory = text[text.index("Memory Configuration"):text.index("Linker script and memory map")]
    regions = {name: (int(origin, 16), int(origin, 16) + int(length, 16)) for name, origin, length
               in re.findall(r"^(flash|ram)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)", memory, re.M)}
    flash = ram = 0
    pattern = re.compile(r"^(\.[\w.$]+)\s*\n?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)"
                         r"(?: load address 0x([0-9a-f]+))?", re.M)
    for name, address, size, load in pattern.findall(text):
        address, size = int(address, 16), int(size, 16)
        if size == 0 or name.startswith(NOT_LOADED) or name == ".stack":
            continue
        inside = lambda region, at: region in regions and regions[region][0] <= at < regions[region][1]
        if inside("flash", address) or (load and inside("flash", int(load, 16))):
            flash += size
        if inside("ram", address):
            ram += size
    return flash, ram - storage

def peak_stack(emulator, elf):
    """Runs the image; returns the stack high-water mark it prints."""
    run = subprocess.run(shlex.split(emulator) + [elf], capture_output=True, text=True, timeout=120)
    found = re.search(r"stack high-water mark (\d+) bytes", run.stdout + run.stderr)
    if run.returncode != 0 or not found:
        sys.exit(f"{elf} under {emulator!r} exited {run.returncode} without its stack high-water "
                 f"mark:\n{run.stdout}{run.stderr}")
    return int(found.group(1))

SDK = GROUPS[0][0]

LOADED = (".text", ".rodata", ".ARM.exidx", ".data", ".bss", ".srodata", ".sdata", ".sbss")
# RISC-V's linker shortens calls and address loads whose targets are near
# enough ("relaxation"): code whose neighbours moved changes by a few bytes.
RELAXATION = 8

def outside_sdk(path):
    """Loaded input sections outside the SDK's line: {(group, name, object): size}."""
    kept = {}
    for name, size, group, origin in input_sections(open(path).read()):
        if group != SDK and name.startswith(LOADED):
            key = (group, name, origin.rsplit("/", 1)[-1])
            kept[key] = kept.get(key, 0) + size
    return kept

def compare(without_map, with_map):
    """Fails unless only the SDK's line differs between the two links."""
    totals = {}
    for path in (without_map, with_map):
        _, sdk, flash, _, sections = breakdown(path)
        totals[path] = sdk, flash, flash - sections  # (the last: padding between sections)
    before, after = outside_sdk(without_map), outside_sdk(with_map)
    moved = sorted(set(before) ^ set(after))
    resized = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    for group, name, origin in moved:
        side = "only without" if (group, name, origin) in before else "only with"
        print(f"    {side} link-time optimization: {group}: {name} ({origin})")
    relaxes = "riscv" in open(with_map).read()
    for key in resized:
        print(f"    resized{' (linker relaxation)' if relaxes else ''}: {key[0]}: {key[1]} "
              f"({key[2]}): {before[key]} B -> {after[key]} B")
    grown = sum(after[k] - before[k] for k in resized)
    sdk_drop = totals[without_map][0] - totals[with_map][0]
    image_drop = totals[without_map][1] - totals[with_map][1]
    padding = totals[with_map][2] - totals[without_map][2]
    print(f"  outside the SDK: {len(before)} input sections without, {len(after)} with link-time "
          f"optimization, {len(moved)} only in one, {len(resized)} resized ({grown:+} B); SDK "
          f"{sdk_drop} B smaller, whole image {image_drop} B smaller (alignment padding between "
          f"sections {padding:+} B)")
    relaxed = relaxes and all(abs(after[k] - before[k]) <= RELAXATION for k in resized)
    if moved or (resized and not relaxed) or image_drop + max(grown, 0) + max(padding, 0) < sdk_drop:
        sys.exit("the SDK's line is not the SDK's alone (above)")

if __name__ == "__main__":
    if sys.argv[1:2] == ["--compare"] and len(sys.argv) == 4:
        compare(sys.argv[2], sys.argv[3])
        sys.exit(0)
    args, budgets, image_budgets, emulator = sys.argv[1:], {}, {}, None
    while args and args[0] in ("--budget", "--image-budget", "--emulator"):
        option, value, args = args[0], args[1], args[2:]
        if option == "--emulator":
            emulator = value
            continue
        image, _, limit = value.partition("=")
        if option == "--budget":
            budgets[image] = int(limit)
        else:
            image_budgets[image] = tuple(int(n) for n in limit.split(","))
    if image_budgets and not emulator:
        sys.exit("--image-budget needs --emulator (the peak stack is measured by running the image)")
    over = []
    for map_file in args:
        image, sdk_flash, total_flash, total_ram, _ = breakdown(map_file)
        if image in budgets:
            verdict = "within" if sdk_flash <= budgets[image] else "OVER"
            print(f"    budget: SDK {sdk_flash} B, {verdict} its {budgets[image]} B "
                  "(examples/firmware-m4/size_budgets.cmake)")
            if sdk_flash > budgets[image]:
                over.append(image)
        if image in image_budgets:
            flash_limit, ram_limit = image_budgets[image]
            stack = peak_stack(emulator, map_file.removesuffix(".map") + ".elf")
            ram = total_ram + stack
            fits = total_flash <= flash_limit and ram <= ram_limit
            print(f"    budget: whole image flash {total_flash} B of {flash_limit} B; RAM {ram} B of "
                  f"{ram_limit} B ({total_ram} B static + {stack} B peak stack, measured): "
                  f"{'fits' if fits else 'DOES NOT FIT'} (examples/firmware-m4/size_budgets.cmake)")
            if not fits:
                over.append(image)
    named = {m.rsplit("/", 1)[-1].removesuffix(".map") for m in args}
    missing = (set(budgets) | set(image_budgets)) - named
    if missing:
        sys.exit(f"no map for the budgeted images {sorted(missing)}")
    if over:
        sys.exit(f"over budget: {', '.join(over)}")

#!/bin/bash
# A hostile external bot in shell (no naparena) for the sandbox tests: as hostile.py, at
# the first decision of every match it tries each attack once and writes
# `HOSTILE ["attack", ...]` to stderr naming those that succeeded, then plays the first
# legal answer. One argument, RUN_DIR:FILE:PORT:VICTIM_PID:TOKEN:MARKER (not a path, so
# the sandbox does not bind it as one of the bot's own files).
IFS=: read -r run file port victim token marker <<<"$1"

attack() {
    found=()
    for f in "$run"/matches/*.json; do
        grep -q '"deal"' "$f" 2>/dev/null && { found+=('"run_dir"'); break; }
    done
    head -c1 "$file" >/dev/null 2>&1 && found+=('"file0"')
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && found+=('"network"')
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [ "$p" != 1 ] && [ "$p" != "$$" ] && [ "$p" != "$PPID" ] && [ -r "/proc/$p/cmdline" ] \
            && [ "$(cut -d' ' -f6 "/proc/$p/stat" 2>/dev/null)" != "$(cut -d' ' -f6 /proc/$$/stat)" ] \
            && { found+=('"processes"'); break; }
    done
    kill -0 "$victim" 2>/dev/null && found+=('"signal"')
    kill -STOP "$victim" 2>/dev/null && kill -CONT "$victim" 2>/dev/null && found+=('"stop"')
    [ "$PPID" -gt 1 ] && kill -0 "$PPID" 2>/dev/null && found+=('"worker"')
    note="/tmp/naparena-hostile-$token"
    [ -e "$note" ] && found+=('"note"')
    echo here >>"$note" 2>/dev/null
    for _ in 1 2 3 4; do setsid sleep "$marker" </dev/null >/dev/null 2>&1 & done
    (IFS=,; echo "HOSTILE [${found[*]}]" >&2)
}

attacked=0
while IFS= read -r line; do
    case $line in
    *'"type":"hello"'*) echo '{"type":"hello","protocol":1,"name":"hostile-sh","params":{}}' ;;
    *'"type":"match"'*) attacked=0 ;;
    *'"type":"decide"'*)
        [ $attacked = 0 ] && { attacked=1; attack; }
        legal=${line#*\"legal\":[}
        case $legal in
        \[*) answer="${legal%%]*}]" ;;
        *) answer=${legal%%[],]*} ;;
        esac
        echo "{\"type\":\"answer\",\"answer\":$answer}" ;;
    *'"type":"shutdown"'*) exit 0 ;;
    esac
done

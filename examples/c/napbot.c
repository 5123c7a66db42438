/* A complete naparena bot in C: the C standard library and POSIX getline, no naparena.
 *
 * It speaks the seat protocol (docs/PROTOCOL.md): one JSON message a line on stdin, one
 * answer a line on stdout for each "decide". The few JSON values it needs are found by a
 * small scanner that skips over everything else, so unknown fields and message types are
 * ignored, as the protocol asks.
 *
 * Build: cc -O2 -o napbot napbot.c
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int min_suit = 3; /* parameter: bid three with a suit this long */

/* --- a minimal JSON scanner: pointers into the line, nothing copied ---------------- */

static const char *ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

/* The end of the value starting at p (NULL if malformed). */
static const char *skip(const char *p) {
    p = ws(p);
    if (*p == '"') {
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && p[1]) p++;
        return *p ? p + 1 : NULL;
    }
    if (*p == '[' || *p == '{') {
        char close = *p == '[' ? ']' : '}';
        p = ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            p = skip(p); /* an element, or an object's key */
            if (!p) return NULL;
            p = ws(p);
            if (close == '}' && *p == ':') p = skip(p + 1), p = p ? ws(p) : NULL;
            if (!p) return NULL;
            if (*p == ',') { p++; continue; }
            return *p == close ? p + 1 : NULL;
        }
    }
    while (*p && !strchr(",]} \t\r\n", *p)) p++; /* number, true, false, null */
    return p;
}

/* The value of key in the object at p, or NULL. */
static const char *field(const char *p, const char *key) {
    size_t n = strlen(key);
    p = ws(p);
    if (*p != '{') return NULL;
    p = ws(p + 1);
    while (*p == '"') {
        const char *name = p + 1, *end = skip(p);
        if (!end) return NULL;
        const char *value = ws(ws(end) + 1); /* past the ':' */
        if ((size_t)(end - 1 - name) == n && strncmp(name, key, n) == 0) return value;
        p = skip(value);
        if (!p) return NULL;
        p = ws(p);
        if (*p != ',') return NULL;
        p = ws(p + 1);
    }
    return NULL;
}

/* The elements of the array at p: their start and end pointers; returns the count. */
static int elements(const char *p, const char **start, const char **end, int max) {
    int n = 0;
    p = ws(p);
    if (!p || *p != '[') return 0;
    p = ws(p + 1);
    while (*p && *p != ']' && n < max) {
        start[n] = p;
        p = skip(p);
        if (!p) return n;
        end[n++] = p;
        p = ws(p);
        if (*p == ',') p = ws(p + 1);
    }
    return n;
}

static int is(const char *value, const char *text) {
    size_t n = strlen(text);
    return value && value[0] == '"' && strncmp(value + 1, text, n) == 0 && value[n + 1] == '"';
}

/* --- the strategy -------------------------------------------------------------------- */

#define SUIT(c) ((c) / 13)
#define RANK(c) ((c) % 13)

static int beats(int card, int best, int trumps) {
    return SUIT(card) == SUIT(best) ? RANK(card) > RANK(best) : SUIT(card) == trumps;
}

static void answer_raw(const char *start, const char *end) {
    printf("{\"type\":\"answer\",\"answer\":%.*s}\n", (int)(end - start), start);
}

static void decide(const char *view) {
    const char *start[300], *end[300];
    const char *kind = field(view, "kind");
    int n = elements(field(view, "legal"), start, end, 300);
    if (n == 0) { printf("{\"type\":\"answer\",\"error\":\"no legal answers\"}\n"); return; }

    if (is(kind, "bid")) {
        const char *hs[16], *he[16];
        int counts[4] = {0, 0, 0, 0}, held = elements(field(view, "hand"), hs, he, 16), longest = 0;
        for (int i = 0; i < held; i++) counts[SUIT(atoi(hs[i])) & 3]++;
        for (int s = 0; s < 4; s++) if (counts[s] > longest) longest = counts[s];
        for (int i = 0; i < n; i++)
            if (longest >= min_suit && is(start[i], "three")) { answer_raw(start[i], end[i]); return; }
        printf("{\"type\":\"answer\",\"answer\":\"pass\"}\n");
        return;
    }
    if (is(kind, "play")) {
        int legal[16], count = 0, trumps = -1;
        for (int i = 0; i < n && count < 16; i++) legal[count++] = atoi(start[i]);
        const char *t = field(view, "trumps");
        if (t && *t != 'n') trumps = atoi(t);
        const char *ps[8], *pe[8];
        int plays = elements(field(view, "trick"), ps, pe, 8), best = -1;
        for (int i = 0; i < plays; i++) { /* each play is [seat, card] */
            const char *xs[2], *xe[2];
            if (elements(ps[i], xs, xe, 2) != 2) continue;
            int card = atoi(xs[1]);
            if (best < 0 || beats(card, best, trumps)) best = card;
        }
        int pick = -1;
        for (int i = 0; i < count; i++) { /* lead: the highest; follow: the cheapest winner */
            int c = legal[i];
            if (best < 0) {
                if (pick < 0 || RANK(c) > RANK(pick) || (RANK(c) == RANK(pick) && c > pick)) pick = c;
            } else if (beats(c, best, trumps)) {
                if (pick < 0 || RANK(c) < RANK(pick) || (RANK(c) == RANK(pick) && c < pick)) pick = c;
            }
        }
        if (pick < 0) /* cannot win: the lowest */
            for (int i = 0; i < count; i++)
                if (pick < 0 || RANK(legal[i]) < RANK(pick) || (RANK(legal[i]) == RANK(pick) && legal[i] < pick))
                    pick = legal[i];
        printf("{\"type\":\"answer\",\"answer\":%d}\n", pick);
        return;
    }
    answer_raw(start[0], end[0]); /* every other decision: the first legal answer is safe */
}

/* Its default min_suit from napbot.conf beside the program ("min_suit = 4"), if there:
 * a bot's own data file, which the seat sandbox shows with the bot's folder. */
static void read_conf(const char *program) {
    char path[4096];
    const char *slash = strrchr(program, '/');
    int folder = slash ? (int)(slash - program) : 1;
    snprintf(path, sizeof path, "%.*s/napbot.conf", folder, slash ? program : ".");
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (fscanf(f, " min_suit = %d", &min_suit) == 1)
        fprintf(stderr, "napbot-c: min_suit %d from %s\n", min_suit, path);
    fclose(f);
}

int main(int argc, char **argv) {
    char *line = NULL;
    size_t size = 0;
    if (argc > 0) read_conf(argv[0]);
    while (getline(&line, &size, stdin) > 0) {
        const char *type = field(line, "type");
        if (is(type, "hello")) {
            const char *params = field(line, "params"), *m = params ? field(params, "min_suit") : NULL;
            if (m) min_suit = atoi(m);
            printf("{\"type\":\"hello\",\"protocol\":1,\"name\":\"napbot-c\",\"version\":\"1.0\","
                   "\"params\":{\"min_suit\":3}}\n");
        } else if (is(type, "decide")) {
            decide(field(line, "view"));
        } else if (is(type, "shutdown")) {
            break;
        } /* match, hand_end, match_end, anything newer: nothing to do */
        fflush(stdout);
    }
    free(line);
    return 0;
}

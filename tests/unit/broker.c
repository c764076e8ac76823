/* Unit tests for src/cluster/broker.c: the broker URL (every form, every refusal), and a
 * connection to a real redis-server started here on a free loopback port (with a password,
 * so AUTH is exercised): commands, error replies, consumer groups, stream fields, a server
 * that goes away. The live part is skipped, saying so, without redis-server. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster/broker.h"
#include "tap.h"

static void url_cases(void)
{
    struct broker_url u;
    struct errbuf err = {{0}};
    char shown[320];

    unsetenv("CRUCIBLE_BROKER_PASSWORD");
    is_int(broker_url_parse("redis://10.0.0.5", &u, &err), 0, "a host alone");
    ok(strcmp(u.host, "10.0.0.5") == 0 && u.port == 6379 && u.db == 0 && !u.password[0],
       "defaults: port 6379, database 0, no password");
    is_int(broker_url_parse("redis://:s3cret@broker.internal:7000/3", &u, &err), 0,
           "a password, a port and a database");
    ok(strcmp(u.host, "broker.internal") == 0 && u.port == 7000 && u.db == 3 &&
           strcmp(u.password, "s3cret") == 0 && !u.user[0],
       "each part read");
    is_int(broker_url_parse("redis://crucible:p@ss@h:1", &u, &err), 0,
           "a user, '@' in the password");
    ok(strcmp(u.user, "crucible") == 0 && strcmp(u.password, "p@ss") == 0 && u.port == 1,
       "the last '@' ends the credentials");
    broker_url_show(&u, shown, sizeof(shown));
    ok(!strstr(shown, "p@ss") && strstr(shown, "redis://h:1/0"), "shown without credentials: %s",
       shown);
    setenv("CRUCIBLE_BROKER_PASSWORD", "fromenv", 1);
    broker_url_parse("redis://h", &u, &err);
    is_str(u.password, "fromenv", "the password from $CRUCIBLE_BROKER_PASSWORD");
    unsetenv("CRUCIBLE_BROKER_PASSWORD");

    static const struct {
        const char *url, *says;
    } bad[] = {
        {"http://h:6379", "expected redis://"},
        {"rediss://h:6380", "TLS"},
        {"redis://", "no host"},
        {"redis://h:0", "port must be 1..65535"},
        {"redis://h:70000", "port must be 1..65535"},
        {"redis://h:12x", "port must be"},
        {"redis://h/abc", "database must be a number"},
        {"redis://user@h", "credentials are"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&err, 0, sizeof(err));
        int rc = broker_url_parse(bad[i].url, &u, &err);
        ok(rc < 0 && strstr(err.msg, bad[i].says), "'%s' refused: %s", bad[i].url, err.msg);
    }
}

static int free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int s = socket(AF_INET, SOCK_STREAM, 0), port = -1;

    if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(s, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (s >= 0)
        close(s);
    return port;
}

static void live_cases(void)
{
    struct broker_url u;
    struct errbuf err = {{0}};
    struct broker *b = NULL;
    char url[64], port_s[16];
    redisReply *rep;
    pid_t redis;
    int port = free_port();

    if (access("/usr/bin/redis-server", X_OK) != 0) {
        skip("redis-server is not installed (scripts/install-deps installs it)");
        return;
    }
    snprintf(port_s, sizeof(port_s), "%d", port);
    if ((redis = fork()) == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1); /* its banner is not TAP */
        dup2(null, 2);
        execl("/usr/bin/redis-server", "redis-server", "--port", port_s, "--bind", "127.0.0.1",
              "--save", "", "--appendonly", "no", "--requirepass", "pw", "--loglevel", "warning",
              (char *)NULL);
        _exit(127);
    }
    snprintf(url, sizeof(url), "redis://:wrong@127.0.0.1:%d", port);
    broker_url_parse(url, &u, &err);
    for (int i = 0; i < 100 && !b; i++) { /* until it listens: a wrong password is refused */
        memset(&err, 0, sizeof(err));
        if (!(b = broker_connect(&u, 1.0, &err)) && strstr(err.msg, "refused the credentials"))
            break;
        broker_close(b);
        b = NULL;
        usleep(50000);
    }
    ok(!b && strstr(err.msg, "refused the credentials"), "a wrong password: %s", err.msg);
    snprintf(url, sizeof(url), "redis://:pw@127.0.0.1:%d/2", port);
    broker_url_parse(url, &u, &err);
    b = broker_connect(&u, 1.0, &err);
    ok(b != NULL, "connected with the password, database 2 selected %s", b ? "" : err.msg);
    if (!b) {
        kill(redis, SIGKILL);
        waitpid(redis, NULL, 0);
        return;
    }
    is_int(broker_ensure_group(b, "crucible:jobs:normal", BROKER_GROUP, &err), 0,
           "a consumer group made, with its stream");
    is_int(broker_ensure_group(b, "crucible:jobs:normal", BROKER_GROUP, &err), 0,
           "made again: it exists, which is fine");
    {
        const char *argv[] = {"XADD", "crucible:jobs:normal", "*", "id", "g:1", "body", "a\0b"};
        size_t lens[] = {4, 20, 1, 2, 3, 4, 3};
        rep = broker_cmd(b, &err, 7, argv, lens);
        ok(broker_reply_ok(rep) && rep->type == REDIS_REPLY_STRING, "XADD with a binary field");
        freeReplyObject(rep);
    }
    rep = broker_cmdf(b, &err, "XREADGROUP", "GROUP", BROKER_GROUP, "t", "COUNT", "1", "STREAMS",
                      "crucible:jobs:normal", ">", NULL);
    {
        size_t len = 0;
        const char *body = NULL;
        if (broker_reply_ok(rep) && rep->type == REDIS_REPLY_ARRAY && rep->elements == 1)
            body = broker_field(rep->element[0]->element[1]->element[0]->element[1], "body", &len);
        ok(body && len == 3 && memcmp(body, "a\0b", 3) == 0, "read back whole, NUL included");
        ok(!broker_field(rep->element[0]->element[1]->element[0]->element[1], "nope", NULL),
           "a field it does not have: NULL");
    }
    freeReplyObject(rep);
    rep = broker_cmdf(b, &err, "INCR", "crucible:jobs:normal", NULL);
    ok(rep && !broker_reply_ok(rep) && broker_alive(b),
       "an error reply (WRONGTYPE) is a reply; the connection stays up");
    freeReplyObject(rep);
    rep = broker_cmdf(b, &err, "GET", "x", NULL);
    freeReplyObject(rep);
    kill(redis, SIGKILL);
    waitpid(redis, NULL, 0);
    memset(&err, 0, sizeof(err));
    rep = broker_cmdf(b, &err, "PING", NULL);
    ok(!rep && !broker_alive(b) && err.msg[0], "the server gone: NULL, the connection dead (%s)",
       err.msg);
    rep = broker_cmdf(b, &err, "PING", NULL);
    ok(!rep, "and it stays dead: the caller reconnects");
    broker_close(b);
    memset(&err, 0, sizeof(err));
    ok(!broker_connect(&u, 0.5, &err) && strstr(err.msg, "cannot reach the broker"),
       "connecting to nothing: %s", err.msg);
}

/* names_cases — what becomes part of a key or stream name: only names of a safe alphabet. */
static void names_cases(void)
{
    char id[BROKER_SESSION_ID_MAX], s[BROKER_STREAM_MAX], longkey[BROKER_IDEM_KEY_MAX + 2];

    ok(broker_idem_key_valid("a1-B2_c.3:x"), "a key of letters, digits and . _ : -");
    ok(!broker_idem_key_valid("") && !broker_idem_key_valid("a b") &&
           !broker_idem_key_valid("a*") && !broker_idem_key_valid("k\n"),
       "empty keys, spaces, glob characters and newlines are refused");
    memset(longkey, 'k', sizeof(longkey) - 1);
    longkey[sizeof(longkey) - 1] = '\0';
    ok(!broker_idem_key_valid(longkey), "a key over %d bytes is refused", BROKER_IDEM_KEY_MAX);
    ok(broker_session_of("/v1/sessions/ab12/exec?x=1", id, sizeof(id)) && strcmp(id, "ab12") == 0,
       "the session of /v1/sessions/ab12/exec?x=1: ab12 (%s)", id);
    ok(broker_session_of("/v1/sessions/ab12", id, sizeof(id)) && strcmp(id, "ab12") == 0,
       "the session of /v1/sessions/ab12");
    ok(!broker_session_of("/v1/sessions", id, sizeof(id)) &&
           !broker_session_of("/v1/sessions/", id, sizeof(id)) &&
           !broker_session_of("/v1/sessions/a*b/exec", id, sizeof(id)) &&
           !broker_session_of("/v1/run", id, sizeof(id)),
       "no session in /v1/sessions, an empty id, a glob, another route");
    ok(broker_image_stream(PRIO_HIGH, "python:3.11", s, sizeof(s)) &&
           strcmp(s, "crucible:jobs:high:image:python:3.11") == 0,
       "the stream of image python:3.11 at high priority: %s", s);
    ok(!broker_image_stream(PRIO_LOW, "a b", s, sizeof(s)) &&
           !broker_image_stream(PRIO_LOW, "", s, sizeof(s)) &&
           !broker_image_stream(PRIO_LOW, "x*", s, sizeof(s)),
       "no stream for a name with a space, an empty one, a glob");
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    url_cases();
    names_cases();
    live_cases();
    return done_testing();
}

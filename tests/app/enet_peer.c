/* A real ENet endpoint for the decoder tests (tests/app/decode_enet.rs compiles it; it runs through
 * the test relay there and through the proxy in tests/app/proxy/enet.rs).
 *
 *   enet_peer server PORT SECONDS
 *   enet_peer client PORT SECONDS RATE
 *
 * The server binds 127.0.0.1:PORT and echoes every packet back reliably on channel 0; from its
 * CONNECT it also sends RATE reliable 64-byte packets per second of its own, on channel 1, for
 * SECONDS. Channel 1 orders independently of channel 0, so the server's sends do not wait on what
 * it delivers: at 20 % loss each way ENet's doubling retransmit timeout can hold channel 0's head
 * for much of a short run, and an echo-only server then sent too little to compare. The client
 * connects to 127.0.0.1:PORT and, once it has heard from the server (see below), sends RATE
 * reliable 64-byte packets per second on channel 0 for SECONDS.
 *
 * Why the client waits to hear from the server before it sends: an ENet server refuses, without
 * acking, every data command that reaches it before the client's ack of VERIFY_CONNECT, and the
 * client's first commands retransmit on a timeout that doubles from ENet's 500 ms default RTT, in
 * step with the server's own repeats of VERIFY_CONNECT (each repeat and the retransmission it
 * races reach the server within a few ms). With that ack lost (20 %), channel 0's head lost its
 * first two copies to the refusal, the two left before the client's old fixed end (7.5 s) were
 * both lost now and then, and the server delivered nothing at all ("sent=387 received=0"). The
 * server's first packet on channel 1 proves its side of the handshake is complete. The client
 * starts anyway 5 s after its CONNECT if nothing came (its sends then still span SECONDS).
 *
 * When each stops: the client serves on 1.5 s after its last send (its echoes and acks drain) and,
 * once it has heard from the server, until it has had an echo, that is until channel 0's head got
 * through (a client that never heard from the server, whose side of the handshake may have timed
 * out, does not wait). The server serves on 3 s after its last send, until its first packet came
 * and 3 s after the last one (the echoes' copies; a client whose stream started late, because the
 * server's first packets were lost, is served to its end). These are conditions with deadlines:
 * a head lost on every retransmission (ENet's come 0.5, 1.5, 3.5, 7.5 and 15.5 s after the first
 * copy) still ends, the client 30 s and the server 40 s after it started. A server nobody
 * connected to ends SECONDS + 3 s after it started and prints "STATS none". Then each prints one
 * line with what ENet itself reports of its one peer (received: packets delivered to it, echoes:
 * those on channel 0; disconnected: ENet dropped the peer, whose counters then restarted):
 *
 *   STATS rtt=R lowest=L variance=V sent=S lost=X received=N echoes=E disconnected=D
 *
 * ENet restarts packetsSent and packetsLost every ENET_PEER_PACKET_LOSS_INTERVAL (10 s) after its
 * peer's packetLossEpoch, in the service call that also counts that call's sends and timeouts, so
 * no caller can read those last counts: the peer moves the epoch to now before every call, and
 * both counters then cover the whole run however long its conditions keep it going.
 */
#include <enet/enet.h>
#include <enet/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pin_loss_epoch(ENetHost *host) {
    for (size_t i = 0; i < host->peerCount; ++i) {
        host->peers[i].packetLossEpoch = enet_time_get();
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: enet_peer server|client PORT SECONDS [RATE]\n");
        return 2;
    }
    int server = strcmp(argv[1], "server") == 0;
    int port = atoi(argv[2]);
    double seconds = atof(argv[3]);
    double rate = argc > 4 ? atof(argv[4]) : 50.0;
    if (enet_initialize() != 0) {
        fprintf(stderr, "enet_initialize failed\n");
        return 1;
    }
    ENetAddress address;
    enet_address_set_host(&address, "127.0.0.1");
    address.port = (enet_uint16)port;
    ENetHost *host = server ? enet_host_create(&address, 1, 2, 0, 0) : enet_host_create(NULL, 1, 2, 0, 0);
    if (host == NULL) {
        fprintf(stderr, "enet_host_create failed\n");
        return 1;
    }
    ENetPeer *peer = server ? NULL : enet_host_connect(host, &address, 2, 0);
    const enet_uint32 run_ms = (enet_uint32)(seconds * 1000.0);
    const enet_uint32 drain_ms = server ? 3000 : 1500;
    const enet_uint32 start_wait_ms = 5000;
    const enet_uint32 start = enet_time_get();
    const enet_uint32 deadline = start + (server ? 40000 : 30000);
    const enet_uint32 interval = (enet_uint32)(1000.0 / rate);
    /* Sending: from `next_send` until `stop_sending`, once `sending` (set when the stream starts). */
    int connected = 0, sending = 0, disconnected = 0;
    enet_uint32 connected_at = 0, next_send = 0, stop_sending = 0, last_received_at = 0;
    unsigned long long received = 0, echoes = 0;
    unsigned char payload[64];
    memset(payload, 0xA5, sizeof payload);
    for (;;) {
        enet_uint32 now = enet_time_get();
        if (!ENET_TIME_LESS(now, deadline)) break;
        /* Never connected (or gone before it sent): the plain run's length. */
        if (!sending && !connected && !ENET_TIME_LESS(now, start + run_ms + drain_ms)) break;
        if (sending && !ENET_TIME_LESS(now, stop_sending + drain_ms)) {
            /* The drain is over: each waits on for the sign that channel 0's head got through. */
            int waiting = connected && (server ? received == 0 || ENET_TIME_LESS(now, last_received_at + drain_ms)
                                               : received > 0 && echoes == 0);
            if (!waiting) break;
        }
        if (!server && connected && !sending && !ENET_TIME_LESS(now, connected_at + start_wait_ms)) {
            sending = 1;
            next_send = now;
            stop_sending = now + run_ms;
        }
        ENetEvent event;
        pin_loss_epoch(host);
        while (enet_host_service(host, &event, 1) > 0) {
            switch (event.type) {
            case ENET_EVENT_TYPE_CONNECT:
                peer = event.peer;
                connected = 1;
                connected_at = enet_time_get();
                if (server) {
                    sending = 1;
                    next_send = connected_at;
                    stop_sending = connected_at + run_ms;
                }
                break;
            case ENET_EVENT_TYPE_RECEIVE:
                received++;
                last_received_at = enet_time_get();
                if (event.channelID == 0) echoes++;
                if (server) {
                    ENetPacket *echo = enet_packet_create(event.packet->data, event.packet->dataLength, ENET_PACKET_FLAG_RELIABLE);
                    enet_peer_send(event.peer, 0, echo);
                } else if (!sending) {
                    sending = 1;
                    next_send = enet_time_get();
                    stop_sending = next_send + run_ms;
                }
                enet_packet_destroy(event.packet);
                break;
            case ENET_EVENT_TYPE_DISCONNECT:
                connected = 0;
                disconnected = 1;
                break;
            default:
                break;
            }
            pin_loss_epoch(host);
        }
        now = enet_time_get();
        if (connected && sending && !ENET_TIME_LESS(now, next_send) && ENET_TIME_LESS(now, stop_sending)) {
            ENetPacket *p = enet_packet_create(payload, sizeof payload, ENET_PACKET_FLAG_RELIABLE);
            enet_peer_send(peer, server ? 1 : 0, p);
            pin_loss_epoch(host);
            enet_host_flush(host);
            next_send += interval;
        }
    }
    if (peer == NULL) {
        printf("STATS none\n");
        return 3;
    }
    printf("STATS rtt=%u lowest=%u variance=%u sent=%u lost=%u received=%llu echoes=%llu disconnected=%d\n",
           peer->roundTripTime, peer->lowestRoundTripTime, peer->roundTripTimeVariance, peer->packetsSent,
           peer->packetsLost, received, echoes, disconnected);
    fflush(stdout);
    enet_host_destroy(host);
    enet_deinitialize();
    return 0;
}

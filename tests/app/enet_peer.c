/* A real ENet endpoint for the decoder test (tests/app/decode_enet.rs compiles and runs it).
 *
 *   enet_peer server PORT SECONDS
 *   enet_peer client PORT SECONDS RATE
 *
 * The server binds 127.0.0.1:PORT and echoes every packet back reliably on channel 0. The client
 * connects to 127.0.0.1:PORT and sends RATE reliable 64-byte packets per second on channel 0 for
 * SECONDS; once connected the server also sends RATE reliable packets per second of its own, on
 * channel 1, for SECONDS. Channel 1 orders independently of channel 0, so the server's sends do
 * not wait on what it delivers: at 20 % loss each way ENet's doubling retransmit timeout can hold
 * channel 0's head for much of a short run, and an echo-only server then sent too little to compare.
 * The client keeps serving 1.5 s after its last send (its echoes and acks drain), the server 3 s;
 * then each prints one line with what ENet itself reports of its one peer:
 *
 *   STATS rtt=R lowest=L variance=V sent=S lost=X received=N
 *
 * packetsSent and packetsLost restart every ENET_PEER_PACKET_LOSS_INTERVAL (10 s); a drop of
 * either between two services is such a restart, so the previous value is added to the sum.
 */
#include <enet/enet.h>
#include <enet/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long sum_sent, sum_lost, last_sent, last_lost;

static void track(ENetPeer *peer) {
    if (peer == NULL) return;
    if (peer->packetsSent < last_sent || peer->packetsLost < last_lost) {
        sum_sent += last_sent;
        sum_lost += last_lost;
    }
    last_sent = peer->packetsSent;
    last_lost = peer->packetsLost;
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
    enet_uint32 start = enet_time_get();
    enet_uint32 stop_sending = start + (enet_uint32)(seconds * 1000.0);
    enet_uint32 end = start + (enet_uint32)(seconds * 1000.0) + (server ? 3000 : 1500);
    enet_uint32 interval = (enet_uint32)(1000.0 / rate);
    enet_uint32 next_send = 0;
    int connected = 0;
    unsigned long long received = 0;
    unsigned char payload[64];
    memset(payload, 0xA5, sizeof payload);
    while (ENET_TIME_LESS(enet_time_get(), end)) {
        ENetEvent event;
        while (enet_host_service(host, &event, 1) > 0) {
            switch (event.type) {
            case ENET_EVENT_TYPE_CONNECT:
                peer = event.peer;
                connected = 1;
                next_send = enet_time_get();
                break;
            case ENET_EVENT_TYPE_RECEIVE:
                received++;
                if (server) {
                    ENetPacket *echo = enet_packet_create(event.packet->data, event.packet->dataLength, ENET_PACKET_FLAG_RELIABLE);
                    enet_peer_send(event.peer, 0, echo);
                }
                enet_packet_destroy(event.packet);
                break;
            case ENET_EVENT_TYPE_DISCONNECT:
                connected = 0;
                break;
            default:
                break;
            }
            track(peer);
        }
        track(peer);
        if (connected && !ENET_TIME_LESS(enet_time_get(), next_send) && ENET_TIME_LESS(enet_time_get(), stop_sending)) {
            ENetPacket *p = enet_packet_create(payload, sizeof payload, ENET_PACKET_FLAG_RELIABLE);
            enet_peer_send(peer, server ? 1 : 0, p);
            enet_host_flush(host);
            next_send += interval;
        }
    }
    track(peer);
    if (peer == NULL) {
        printf("STATS none\n");
        return 3;
    }
    printf("STATS rtt=%u lowest=%u variance=%u sent=%llu lost=%llu received=%llu\n", peer->roundTripTime,
           peer->lowestRoundTripTime, peer->roundTripTimeVariance, sum_sent + last_sent, sum_lost + last_lost, received);
    fflush(stdout);
    enet_host_destroy(host);
    enet_deinitialize();
    return 0;
}

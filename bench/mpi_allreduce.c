/*
 * MPI_Allreduce benchmark (float sum, out-of-place) with nccl-tests' size sweep and columns, the OpenMPI
 * peer of `fabricdoctor perf allreduce` in bench/allreduce-rig.sh.
 *
 *   mpicc -O2 -o mpi_allreduce bench/mpi_allreduce.c
 *   mpirun -np 4 ./mpi_allreduce -b 1M -e 256M -f 4 -n 5 -w 2
 *
 * Semantics follow nccl-tests (src/common.cu, doc/PERFORMANCE.md):
 *   -b/-e  first and last message size in bytes (K/M/G suffixes are powers of 1024), -f multiplication factor;
 *   -w     warm-up iterations per size, -n timed iterations per size;
 *   time   per-iteration time in us, each rank timing its own loop after a barrier, then combined over ranks
 *          as nccl-tests' `-a`: 0 rank 0's, 1 the average (nccl-tests' default), 2 the minimum, 3 the maximum;
 *   algbw  size / time (GB/s, 1e9 bytes/s), busbw = algbw * 2(n-1)/n for AllReduce;
 *   #wrong elements that differ from the expected sum after the last timed iteration, summed over ranks.
 * Rank r fills its send buffer with r + 1, so every element of the result is n(n+1)/2: exact in float for any
 * realistic n, so a comparison with == is the right check.
 */
#include <mpi.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(const char *argv0) {
    fprintf(stderr, "usage: %s [-b MINBYTES] [-e MAXBYTES] [-f FACTOR] [-n ITERS] [-w WARMUP] [-a 0|1|2|3]\n", argv0);
}

/* Parses "64", "1K", "16M", "1G" (powers of 1024, as nccl-tests' parsesize). Returns 0 on error. */
static size_t parse_size(const char *s) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s) return 0;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: return 0;
    }
    return *end == '\0' ? (size_t)v : 0;
}

static int parse_int(const char *s, int min) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > 1000000) return -1;
    return (int)v;
}

int main(int argc, char **argv) {
    size_t min_bytes = 1 << 20, max_bytes = 256u << 20;
    int factor = 4, iters = 5, warmup = 2, average = 1, opt;
    while ((opt = getopt(argc, argv, "b:e:f:n:w:a:h")) != -1) {
        switch (opt) {
        case 'b': min_bytes = parse_size(optarg); break;
        case 'e': max_bytes = parse_size(optarg); break;
        case 'f': factor = parse_int(optarg, 2); break;
        case 'n': iters = parse_int(optarg, 1); break;
        case 'w': warmup = parse_int(optarg, 0); break;
        case 'a': average = parse_int(optarg, 0); break;
        default: usage(argv[0]); return 2;
        }
    }
    if (optind != argc || min_bytes < sizeof(float) || max_bytes < min_bytes ||
        max_bytes / sizeof(float) > INT_MAX || factor < 0 || iters < 0 || warmup < 0 ||
        average < 0 || average > 3) {
        usage(argv[0]);
        return 2;
    }

    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    size_t max_count = max_bytes / sizeof(float);
    float *send = malloc(max_count * sizeof(float));
    float *recv = malloc(max_count * sizeof(float));
    if (send == NULL || recv == NULL) {
        fprintf(stderr, "rank %d: cannot allocate 2 x %zu bytes\n", rank, max_bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < max_count; i++) send[i] = (float)(rank + 1);
    const float expected = (float)nranks * (float)(nranks + 1) / 2.0f;
    const double bus_factor = nranks > 1 ? 2.0 * (nranks - 1) / nranks : 0.0;

    if (rank == 0) {
        static const char *const combine[] = {"rank 0's", "average", "minimum", "maximum"};
        printf("# MPI_Allreduce, %d ranks, float sum, out-of-place, %d warm-up + %d timed iterations, %s time\n",
               nranks, warmup, iters, combine[average]);
        printf("#%11s %12s %6s %6s %10s %9s %9s %7s\n", "size", "count", "type", "redop", "time", "algbw", "busbw",
               "#wrong");
        printf("#%11s %12s %6s %6s %10s %9s %9s %7s\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "");
    }
    long long total_wrong_all = 0;
    for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= (size_t)factor) {
        int count = (int)(bytes / sizeof(float));
        for (int i = 0; i < warmup; i++)
            MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double sec = (MPI_Wtime() - t0) / iters, sec_all;
        if (average == 0) {
            sec_all = sec;
            MPI_Bcast(&sec_all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        } else {
            MPI_Allreduce(&sec, &sec_all, 1, MPI_DOUBLE, average == 1 ? MPI_SUM : average == 2 ? MPI_MIN : MPI_MAX,
                          MPI_COMM_WORLD);
            if (average == 1) sec_all /= nranks;
        }

        long long wrong = 0, wrong_all;
        for (int i = 0; i < count; i++) wrong += recv[i] != expected;
        MPI_Allreduce(&wrong, &wrong_all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        total_wrong_all += wrong_all;

        if (rank == 0) {
            double algbw = (double)count * sizeof(float) / sec_all / 1e9;
            printf("%12zu %12d %6s %6s %10.1f %9.4f %9.4f %7lld\n", (size_t)count * sizeof(float), count, "float",
                   "sum", sec_all * 1e6, algbw, algbw * bus_factor, wrong_all);
            fflush(stdout);
        }
        if (bytes > max_bytes / (size_t)factor) break; /* the next size would overflow or pass -e */
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return total_wrong_all == 0 ? 0 : 1;
}

//! The encoder's arithmetic: strided matrix products through `gemm`, and
//! softmax, LayerNorm and the activations over slices, written so they vectorise.

use rayon::prelude::*;

/// Runs `f` compiled for the widest instructions the CPU has (AVX-512, else
/// AVX2 and FMA, found at run time), so the loops inlined into it vectorise
/// beyond the baseline the binary is built for.
#[inline(always)]
pub(crate) fn widest<R>(f: impl FnOnce() -> R) -> R {
    pulp::Arch::new().dispatch(f)
}

/// Elements per parallel task of the element-wise passes: big enough that
/// scheduling costs nothing, small enough to split a batch across cores.
const TASK: usize = 1 << 15;

/// `f` over `xs` in parallel pieces, each compiled by [`widest`].
fn each_piece(xs: &mut [f32], piece: usize, f: impl Fn(&mut [f32]) + Sync) {
    xs.par_chunks_mut(piece.max(1)).for_each(|c| {
        widest(
            #[inline(always)]
            || f(c),
        )
    });
}

/// A read-only matrix inside a slice: element `(i, j)` is `data[i * rs + j * cs]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View<'a> {
    data: &'a [f32],
    rs: usize,
    cs: usize,
}

impl<'a> View<'a> {
    pub(crate) fn new(data: &'a [f32], rs: usize, cs: usize) -> Self {
        Self { data, rs, cs }
    }

    /// Whether a `rows × cols` matrix fits in the slice, its last element's
    /// offset computed without overflow.
    fn holds(&self, rows: usize, cols: usize) -> bool {
        if rows == 0 || cols == 0 {
            return true;
        }
        let last = (rows - 1)
            .checked_mul(self.rs)
            .zip((cols - 1).checked_mul(self.cs))
            .and_then(|(a, b)| a.checked_add(b));
        last.is_some_and(|last| last < self.data.len() && last <= isize::MAX as usize)
    }
}

/// `dst[m × n] = (dst if accumulate) + scale · lhs[m × k] · rhs[k × n]`, with
/// `dst` row-major at row stride `dst_rs`; spread over `threads` threads.
///
/// # Panics
/// When an operand does not fit its slice: a bug in the caller, never input.
#[allow(clippy::too_many_arguments)]
pub(crate) fn matmul(
    dst: &mut [f32],
    dst_rs: usize,
    (m, n, k): (usize, usize, usize),
    lhs: View<'_>,
    rhs: View<'_>,
    scale: f32,
    accumulate: bool,
    threads: usize,
) {
    let out = View::new(dst, dst_rs, 1);
    assert!(
        out.holds(m, n) && lhs.holds(m, k) && rhs.holds(k, n),
        "matmul operands out of bounds: {m}x{n}x{k}"
    );
    // Rows of `dst` must not overlap, or threads would write the same element.
    assert!(
        m <= 1 || dst_rs >= n,
        "matmul output rows overlap: {n} columns at stride {dst_rs}"
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            for row in 0..m {
                dst[row * dst_rs..row * dst_rs + n].fill(0.0);
            }
        }
        return;
    }
    let parallelism = if threads > 1 {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    };
    // Strides are element counts well below isize::MAX (slices of f32).
    let stride = |s: usize| s as isize;
    // SAFETY: the asserts above check that the last element each operand
    // addresses, (rows - 1) * rs + (cols - 1) * cs, lies inside its slice
    // (computed without overflow, so every stride fits an isize), and every
    // other element addressed is below it; that distinct output elements are
    // distinct memory (rows at least `n` apart); and `dst` is borrowed
    // mutably, so it cannot overlap `lhs` or `rhs`. gemm reads and writes only
    // those elements. Unsafe because candle's own products allocate a fresh buffer
    // per operation: the page faults and zeroing were a third of the run time
    // (docs/benchmarks.md, local embeddings).
    #[allow(unsafe_code)]
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            stride(dst_rs),
            accumulate,
            lhs.data.as_ptr(),
            stride(lhs.cs),
            stride(lhs.rs),
            rhs.data.as_ptr(),
            stride(rhs.cs),
            stride(rhs.rs),
            1.0,
            scale,
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// `e^x` to about one part in 10^7 for the range softmax and GELU use
/// (results below `e^-87` are `e^-87`): range reduction by powers of two and
/// a degree-7 polynomial, with no branches, so loops over slices vectorise.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    // ln 2 split in two so that n * LN2_HI is exact.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Adding and subtracting 1.5 * 2^23 rounds to the nearest integer.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let shifted = x * LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let mut p = 1.987_569_1e-4_f32;
    p = p * r + 1.398_2e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let y = p * r * r + r + 1.0;
    // `shifted`'s low bits hold n as an integer offset from ROUND's: integer
    // arithmetic on them vectorises, where `n as i32` (saturating) does not.
    let two_n = f32::from_bits(
        (shifted
            .to_bits()
            .wrapping_sub(ROUND.to_bits())
            .wrapping_add(127))
            << 23,
    );
    y * two_n
}

/// Lanes of the reductions below: eight partial results that the compiler
/// keeps in one vector register (a single running sum or maximum would not
/// vectorise, since float operations may not be reordered).
const LANES: usize = 8;

#[inline(always)]
fn max_of(xs: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (l, v) in lanes.iter_mut().zip(chunk) {
            *l = if *v > *l { *v } else { *l };
        }
    }
    chunks
        .remainder()
        .iter()
        .chain(&lanes)
        .copied()
        .fold(f32::NEG_INFINITY, f32::max)
}

#[inline(always)]
fn sum_of(xs: &[f32]) -> f32 {
    let mut lanes = [0.0_f32; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (l, v) in lanes.iter_mut().zip(chunk) {
            *l += v;
        }
    }
    lanes.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
}

/// Softmax of each row of `rows` (row length `n`), in place; the caller
/// runs it inside [`widest`].
#[inline(always)]
pub(crate) fn softmax_rows(rows: &mut [f32], n: usize) {
    for row in rows.chunks_exact_mut(n) {
        let max = max_of(row);
        row.iter_mut().for_each(|v| *v = exp(*v - max));
        let inv = 1.0 / sum_of(row);
        row.iter_mut().for_each(|v| *v *= inv);
    }
}

/// LayerNorm of every row of `x` (rows as long as `gamma`), in place, rows in parallel.
pub(crate) fn layer_norm(x: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let h = gamma.len();
    each_piece(x, (TASK / h.max(1)).max(1) * h, |rows| {
        for row in rows.chunks_exact_mut(h) {
            layer_norm_row(row, gamma, beta, eps);
        }
    });
}

/// LayerNorm of one row, in place: `(x - mean) / sqrt(var + eps) * gamma + beta`.
#[inline(always)]
fn layer_norm_row(row: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let n = row.len() as f32;
    let mean = sum_of(row) / n;
    let mut lanes = [0.0_f32; LANES];
    let mut chunks = row.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (l, v) in lanes.iter_mut().zip(chunk) {
            *l += (v - mean) * (v - mean);
        }
    }
    let tail: f32 = chunks
        .remainder()
        .iter()
        .map(|v| (v - mean) * (v - mean))
        .sum();
    let var = (lanes.iter().sum::<f32>() + tail) / n;
    let inv = 1.0 / (var + eps).sqrt();
    for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
        *v = (*v - mean) * inv * g + b;
    }
}

/// `erf(x)` within 3e-7 in f32 (Abramowitz and Stegun 7.1.26: 1.5e-7), branch-free.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_8 + t * (-1.453_152_1 + t * 1.061_405_4))));
    (1.0 - poly * exp(-a * a)).copysign(x)
}

/// GELU as BERT defines it, `x/2 · (1 + erf(x/√2))`, in place.
pub(crate) fn gelu_erf(xs: &mut [f32]) {
    let inv_sqrt2 = std::f32::consts::FRAC_1_SQRT_2;
    each_piece(xs, TASK, |xs| {
        xs.iter_mut()
            .for_each(|x| *x = 0.5 * *x * (1.0 + erf(*x * inv_sqrt2)));
    });
}

/// GELU's tanh approximation (`gelu_new`), in place.
pub(crate) fn gelu_tanh(xs: &mut [f32]) {
    let c = (2.0 / std::f32::consts::PI).sqrt();
    each_piece(xs, TASK, |xs| {
        xs.iter_mut().for_each(|x| {
            let u = c * (*x + 0.044_715 * *x * *x * *x);
            // tanh(u) = 1 - 2 / (e^{2u} + 1), exact at both ends after clamping.
            let tanh = 1.0 - 2.0 / (exp(2.0 * u) + 1.0);
            *x = 0.5 * *x * (1.0 + tanh);
        });
    });
}

/// ReLU, in place.
pub(crate) fn relu(xs: &mut [f32]) {
    each_piece(xs, TASK, |xs| xs.iter_mut().for_each(|x| *x = x.max(0.0)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_within_two_parts_in_ten_million() {
        let mut worst = 0.0_f64;
        for i in -8_000..=8_000 {
            let x = i as f32 / 100.0;
            let want = f64::from(x).exp();
            let got = f64::from(exp(x));
            worst = worst.max(((got - want) / want).abs());
        }
        assert!(worst < 2e-7, "relative error {worst}");
        assert_eq!(exp(0.0), 1.0);
        assert!(exp(-1000.0) < 1e-37 && exp(-1000.0) >= 0.0);
    }

    #[test]
    fn erf_and_gelu_follow_their_definitions() {
        // erf values to 9 digits, from any table.
        for (x, want) in [
            (0.0_f32, 0.0_f64),
            (0.5, 0.520_499_877_8),
            (1.0, 0.842_700_792_9),
            (-2.0, -0.995_322_265_0),
            (3.5, 0.999_999_256_8),
        ] {
            assert!(
                (f64::from(erf(x)) - want).abs() < 3e-7,
                "erf({x}) = {}",
                erf(x)
            );
        }
        let mut g = [-3.0_f32, -1.0, 0.0, 1.0, 3.0];
        gelu_erf(&mut g);
        let want = [
            -0.004_049_7_f32,
            -0.158_655_25,
            0.0,
            0.841_344_7,
            2.995_950_3,
        ];
        for (a, b) in g.iter().zip(want) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
        let mut t = [-3.0_f32, 1.0, 20.0];
        gelu_tanh(&mut t);
        assert!((t[0] - -0.003_637_3).abs() < 1e-6 && (t[1] - 0.841_192).abs() < 1e-6);
        assert_eq!(t[2], 20.0);
    }

    #[test]
    fn softmax_and_layer_norm_match_direct_sums() {
        let mut rows = [1.0_f32, 2.0, 3.0, -50.0, 0.0, 50.0];
        softmax_rows(&mut rows, 3);
        let e = [1.0_f64.exp(), 2.0_f64.exp(), 3.0_f64.exp()];
        let s: f64 = e.iter().sum();
        for (i, v) in e.iter().enumerate() {
            assert!((f64::from(rows[i]) - v / s).abs() < 1e-7);
        }
        assert!((rows[5] - 1.0).abs() < 1e-7 && rows[3] < 1e-37);
        let mut row = [1.0_f32, 2.0, 3.0, 4.0];
        layer_norm(&mut row, &[1.0, 1.0, 2.0, 1.0], &[0.0, 0.0, 0.0, 1.0], 0.0);
        let sd = 1.25_f32.sqrt();
        let want = [-1.5 / sd, -0.5 / sd, 2.0 * 0.5 / sd, 1.5 / sd + 1.0];
        for (a, b) in row.iter().zip(want) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
    }

    #[test]
    fn matmul_handles_strides_scale_and_accumulation() {
        // lhs 2x3, rhs given transposed (3x2 read through strides).
        let lhs = [1.0_f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let rhs_t = [1.0_f32, 0.0, -1.0, 2.0, 1.0, 0.0];
        let mut dst = [10.0_f32, 10.0, 99.0, 10.0, 10.0, 99.0];
        matmul(
            &mut dst,
            3,
            (2, 2, 3),
            View::new(&lhs, 3, 1),
            View::new(&rhs_t, 1, 3),
            2.0,
            true,
            1,
        );
        // lhs · rhs = [[-2, 4], [-2, 13]]
        assert_eq!(dst, [6.0, 18.0, 99.0, 6.0, 36.0, 99.0]);
        matmul(
            &mut dst,
            3,
            (2, 2, 3),
            View::new(&lhs, 3, 1),
            View::new(&rhs_t, 1, 3),
            1.0,
            false,
            2,
        );
        assert_eq!(dst, [-2.0, 4.0, 99.0, -2.0, 13.0, 99.0]);
    }

    #[test]
    #[should_panic(expected = "overlap")]
    fn matmul_refuses_overlapping_output_rows() {
        let mut dst = [0.0_f32; 8];
        matmul(
            &mut dst,
            1,
            (2, 2, 1),
            View::new(&[1.0; 2], 1, 1),
            View::new(&[1.0; 2], 2, 1),
            1.0,
            false,
            1,
        );
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn matmul_refuses_strides_that_overflow() {
        let mut dst = [0.0_f32; 4];
        matmul(
            &mut dst,
            2,
            (2, 2, 2),
            View::new(&[1.0; 4], usize::MAX, 1),
            View::new(&[1.0; 4], 2, 1),
            1.0,
            false,
            1,
        );
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn matmul_refuses_operands_outside_their_slices() {
        let mut dst = [0.0_f32; 4];
        matmul(
            &mut dst,
            2,
            (2, 2, 3),
            View::new(&[1.0; 5], 3, 1),
            View::new(&[1.0; 6], 2, 1),
            1.0,
            false,
            1,
        );
    }
}

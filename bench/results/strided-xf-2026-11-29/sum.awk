# Medians per provider and tree of ab.sh's output: iput us, put us, put/iput.
function med(arr, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j + 1] = arr[j]; arr[j + 1] = t }
    return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
}
$1 ~ /^[0-9]+$/ && NF >= 11 { k = $2 " " $3; n = ++N[k]; I[k, n] = $6; P[k, n] = $7; R[k, n] = $10; keys[k] = 1 }
END {
    for (k in keys) {
        n = N[k]
        for (i = 1; i <= n; i++) a[i] = I[k, i]; mi = med(a, n)
        for (i = 1; i <= n; i++) a[i] = P[k, i]; mp = med(a, n)
        for (i = 1; i <= n; i++) a[i] = R[k, i]; mr = med(a, n)
        printf "%-8s %s rounds %d: iput %.2f us, put %.2f us, put/iput %.3f\n", k, "", n, mi, mp, mr
    }
}

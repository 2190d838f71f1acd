package policy

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// currencies are the active codes of ISO 4217 (its list one, the funds and the precious metals
// included; XTS, for testing, and XXX, no currency, left out). A code that is withdrawn, as HRK
// was when Croatia took up the euro, leaves the list.
var currencies = func() map[string]bool {
	const codes = `AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP
BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD
FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR
KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV
MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG
SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI
UYU UYW UZS VED VES VND VUV WST XAF XAG XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU XUA YER
ZAR ZMW ZWG`
	m := map[string]bool{}
	for _, c := range strings.Fields(codes) {
		m[c] = true
	}
	return m
}()

// IsCurrency reports whether code is an active ISO 4217 code, written in upper case (EUR).
func IsCurrency(code string) bool { return currencies[code] }

// minorUnits lists the currencies whose amounts are not written with two decimals (ISO 4217).
var minorUnits = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
	"RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
	"CLF": 4, "UYW": 4,
}

// MinorUnits is how many decimals an amount in currency is written with: 0 for JPY or KRW, 3 for
// KWD, 2 for most.
func MinorUnits(currency string) int {
	if n, ok := minorUnits[currency]; ok {
		return n
	}
	return 2
}

// Money writes an amount in currency, rounded half away from zero to the currency's minor unit,
// the same way in every message and report: $12.50, 12.50 EUR, 1235 JPY.
func Money(currency string, v float64) string {
	return amount(currency, v, MinorUnits(currency))
}

// Price writes a price per unit like Money, with as many more decimals (up to six) as the price
// has: 0.125 EUR per GPU-hour is not 0.12 EUR.
func Price(currency string, v float64) string {
	places := MinorUnits(currency)
	for places < 6 && Round(v, places) != Round(v, 6) {
		places++
	}
	return amount(currency, v, places)
}

func amount(currency string, v float64, places int) string {
	r := Round(v, places)
	sign := ""
	if r < 0 {
		sign, r = "-", -r
	}
	n := strconv.FormatFloat(r, 'f', places, 64)
	if currency == "USD" || currency == "" {
		return sign + "$" + n
	}
	return sign + n + " " + currency
}

// Round rounds v half away from zero to places decimals, never to -0: what every figure shown
// is rounded with. It rounds the number as it is written (the shortest decimal that reads back as
// v), so that half a cent rounds up as a person rounds it: 1.005 is 1.01, though the binary
// value nearest 1.005 is a hair below it.
func Round(v float64, places int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, float64(places))
	x := v * p
	r := math.Round(x) / p
	if _, frac := math.Modf(math.Abs(x)); math.Abs(frac-0.5) < 1e-6 {
		// Near a half: decide on the decimal, not on its binary approximation.
		r = RoundRat(Decimal(v), places)
	}
	if r == 0 {
		return 0 // no "-0.00"
	}
	return r
}

// RoundRat rounds an exact amount half away from zero to places decimals (0 to 18), never to -0.
func RoundRat(v *big.Rat, places int) float64 {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)
	x := new(big.Rat).Mul(v, new(big.Rat).SetInt(scale))
	num := new(big.Int).Abs(x.Num())
	q, m := new(big.Int).QuoRem(num, x.Denom(), new(big.Int))
	if m.Lsh(m, 1).Cmp(x.Denom()) >= 0 { // the remainder is half the denominator or more
		q.Add(q, big.NewInt(1))
	}
	if x.Sign() < 0 {
		q.Neg(q)
	}
	r, _ := new(big.Rat).SetFrac(q, scale).Float64()
	if r == 0 {
		return 0
	}
	return r
}

// Decimal is v as the exact decimal it is written as (the shortest that reads back as v): a
// price of 3.17 is 317/100, not the binary value nearest it.
func Decimal(v float64) *big.Rat {
	d, ok := new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, 64))
	if !ok { // NaN or ±Inf, which the policy refuses
		return new(big.Rat)
	}
	return d
}

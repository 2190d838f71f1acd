package policy

import (
	"math"
	"strconv"
)

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
	for places < 6 && roundTo(v, places) != roundTo(v, 6) {
		places++
	}
	return amount(currency, v, places)
}

func amount(currency string, v float64, places int) string {
	r := roundTo(v, places)
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

func roundTo(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	r := math.Round(v*p) / p
	if r == 0 {
		return 0 // no "-0.00"
	}
	return r
}

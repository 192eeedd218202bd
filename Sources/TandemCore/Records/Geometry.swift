import Foundation

func sinSquared(_ x: Double) -> Double { let s = sin(x); return s * s }
func cosine(_ x: Double) -> Double { cos(x) }
func arcsine(_ x: Double) -> Double { asin(x) }
